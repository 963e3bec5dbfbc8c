/**
 * The documentation keeps up with the CLI and with itself:
 *  - every flag that `hearth <command> --help` prints (every command and subcommand, found by walking
 *    the help's own command lists) has its row in docs/CONFIGURATION.md under that command's heading,
 *    and no row there names a flag the command does not have;
 *  - every relative link in README.md and docs/*.md points at a file that exists, and a link to a
 *    heading (`FILE.md#anchor`) at a heading that exists (GitHub's anchors).
 * The CLI is run as an operator runs it (a child process per `--help`), so what is checked is what
 * commander prints, not a copy of the option list.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { hearthCommand } from '../helpers/hearth-command.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const configurationDoc = join(repoRoot, 'docs/CONFIGURATION.md');

/** `hearth ...command --help`, as printed. */
function helpOf(command: string[]): Promise<string> {
  const child = spawn(process.execPath, [...hearthCommand(), ...command, '--help'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolveHelp, rejectHelp) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolveHelp(output);
      else rejectHelp(new Error(`hearth ${command.join(' ')} --help exited ${code}: ${errors}`));
    }),
  );
}

/** The lines of one section of commander's help ("Options:", "Commands:"), up to the next blank line. */
function helpSection(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start < 0) return [];
  const end = lines.findIndex((line, index) => index > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

interface HelpCommand {
  path: string[];
  flags: string[];
}

/** Every command reachable from the top-level help, with the long flags each prints (not --help). */
async function everyCommand(path: string[] = []): Promise<HelpCommand[]> {
  const help = await helpOf(path);
  const flags = helpSection(help, 'Options')
    .map((line) => /^ {2}(?:-\w, )?(--[a-z0-9][a-z0-9-]*)/.exec(line)?.[1])
    .filter((flag): flag is string => flag !== undefined && flag !== '--help');
  const subcommands = helpSection(help, 'Commands')
    .map((line) => /^ {2}([a-z][a-z0-9-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
  const below = await Promise.all(subcommands.map((name) => everyCommand([...path, name])));
  return [{ path, flags }, ...below.flat()];
}

/** The flags documented per command: rows (`| \`--flag ...\` |`) under each "## `hearth <command>`" heading. */
function documentedFlags(markdown: string): Map<string, string[]> {
  const byCommand = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('#')) {
      const command = /^#{2,3} `hearth ([a-z][a-z0-9 -]*?)(?: <[^>]+>)?`$/.exec(line)?.[1];
      current = command === undefined ? undefined : [];
      if (command !== undefined && current) byCommand.set(command, current);
      continue;
    }
    const flag = /^\| `(--[a-z0-9][a-z0-9-]*)/.exec(line)?.[1];
    if (flag && current) current.push(flag);
  }
  return byCommand;
}

describe('every CLI flag is documented in docs/CONFIGURATION.md', { timeout: 300_000 }, () => {
  test('each command of --help has its section, with a row per flag and no row for a flag it lacks', async () => {
    const commands = (await everyCommand()).filter((command) => command.flags.length > 0);
    assert.ok(commands.some((command) => command.path.join(' ') === 'start' && command.flags.includes('--port')), 'the walk found `start --port`');
    const documented = documentedFlags(readFileSync(configurationDoc, 'utf8'));
    const problems: string[] = [];
    for (const { path, flags } of commands) {
      const name = path.join(' ');
      const rows = documented.get(name);
      if (!rows) {
        problems.push(`no section "## \`hearth ${name}\`" in docs/CONFIGURATION.md`);
        continue;
      }
      for (const flag of flags) if (!rows.includes(flag)) problems.push(`hearth ${name} ${flag} has no row in docs/CONFIGURATION.md`);
      for (const row of rows) if (!flags.includes(row)) problems.push(`docs/CONFIGURATION.md documents ${row} for hearth ${name}, which --help does not list`);
    }
    const known = new Set(commands.map((command) => command.path.join(' ')));
    for (const name of documented.keys()) if (!known.has(name)) problems.push(`docs/CONFIGURATION.md has a section for "hearth ${name}", which --help does not list`);
    assert.deepEqual(problems, []);
  });
});

/** README.md and every docs/*.md. */
function markdownFiles(): string[] {
  const docs = join(repoRoot, 'docs');
  return [join(repoRoot, 'README.md'), ...readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => join(docs, name))];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6} (.+)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Links of a markdown text outside code: [text](target). */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe('links between the docs', () => {
  test('every relative link of README.md and docs/*.md reaches an existing file and heading', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of markdownFiles()) {
      const from = relative(repoRoot, file);
      const markdown = readFileSync(file, 'utf8');
      for (const link of linksOf(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
        checked++;
        const [target = '', anchor] = link.split('#');
        const targetFile = target === '' ? file : join(dirname(file), decodeURIComponent(target));
        if (!existsSync(targetFile)) {
          problems.push(`${from}: ${link} (no such file)`);
          continue;
        }
        if (anchor !== undefined && targetFile.endsWith('.md') && !headingAnchors(readFileSync(targetFile, 'utf8')).has(anchor)) {
          problems.push(`${from}: ${link} (no such heading)`);
        }
      }
    }
    assert.ok(checked > 10, `only ${checked} links found`);
    assert.deepEqual(problems, []);
  });

  test('the README stays a front page', () => {
    const lines = readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n').length;
    assert.ok(lines <= 200, `README.md has ${lines} lines; the reference belongs in docs/`);
  });
});
