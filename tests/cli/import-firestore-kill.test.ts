/**
 * `hearth import firestore` is all or nothing: killed (SIGKILL) in the middle of a large import it
 * leaves the target database without a document, and the same import run again takes all of them.
 * A corrupt export (one flipped byte) is refused with the file and offset, nothing written.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExportWriter } from '../../packages/server/src/firestore/exports/export-layout.js';
import { documentToEntity } from '../../packages/server/src/firestore/exports/entity-values.js';
import type { Value } from '../../packages/server/src/firestore/core/values.js';
import { repoRoot, tempDataDir } from '../helpers/hearth.js';
import { hearthCli } from '../helpers/firestore-export-differential.js';
import { storedRows, testDatabaseUrl } from '../helpers/test-backend.js';
import { hearthCommand } from '../helpers/hearth-command.js';

const count = 100_000;

function writeLargeExport(): string {
  const folder = join(tempDataDir(), 'big');
  const writer = new ExportWriter(folder);
  for (let i = 0; i < count; i++) {
    const fields = new Map<string, Value>([
      ['n', { type: 'integer', value: BigInt(i) }],
      ['name', { type: 'string', value: `item ${i % 997}` }],
      ['tags', { type: 'array', values: [{ type: 'string', value: `t${i % 7}` }] }],
    ]);
    writer.add(documentToEntity('demo-kill', '(default)', `items/i${i}`, fields));
  }
  writer.close();
  return folder;
}

async function documentsIn(dataDir: string): Promise<number> {
  const rows = await storedRows(dataDir, "SELECT count(*) AS n FROM fs_documents WHERE db = 'demo-kill/(default)'");
  return Number(rows[0]!.n);
}

test('a killed import leaves the target empty; run again, it imports everything', async () => {
  const folder = writeLargeExport();
  const dataDir = tempDataDir();
  const databaseUrl = await testDatabaseUrl(dataDir);
  const child = spawn(process.execPath, [...hearthCommand(), 'import', 'firestore', folder, '--data', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Killed once it says it has written some documents (in its one transaction), before the last batch.
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const written = [...stderr.matchAll(/importing: (\d+) documents/g)].map((match) => Number(match[1]));
      if (written.some((n) => n < count)) resolve();
    });
    child.once('exit', () => reject(new Error(`the import ended before it could be killed (make the export larger):\n${stderr}`)));
  });
  child.kill('SIGKILL');
  await exited;
  assert.doesNotMatch(stderr, /Imported/);
  assert.equal(await documentsIn(dataDir), 0);

  const again = await hearthCli(['import', 'firestore', folder], dataDir);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`Imported ${count} document\\(s\\) into demo-kill/\\(default\\)`));
  assert.equal(await documentsIn(dataDir), count);
});

test('a corrupt export is refused with where it is broken, nothing written', async () => {
  const folder = join(tempDataDir(), 'small');
  const writer = new ExportWriter(folder);
  for (let i = 0; i < 10; i++) writer.add(documentToEntity('demo-kill', '(default)', `items/i${i}`, new Map([['n', { type: 'integer', value: BigInt(i) }]])));
  writer.close();
  const output = join(folder, 'all_namespaces/all_kinds/output-0');
  const bytes = readFileSync(output);
  bytes[bytes.length - 3]! ^= 0xff;
  writeFileSync(output, bytes);
  const dataDir = tempDataDir();
  const refused = await hearthCli(['import', 'firestore', folder], dataDir);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /output-0: a record checksum does not match at byte \d+/);
  assert.equal(await documentsIn(dataDir), 0);

  const notAnExport = await hearthCli(['import', 'firestore', dataDir], dataDir);
  assert.equal(notAnExport.code, 1);
  assert.match(notAnExport.stderr, /no \.overall_export_metadata file/);
});

test('--collection-ids takes only those collection groups, at any depth, both ways; --database names the target', async () => {
  const folder = join(tempDataDir(), 'mixed');
  const writer = new ExportWriter(folder);
  for (const path of ['items/a', 'items/b', 'notes/n1', 'items/a/notes/n2', 'items/a/other/o1']) {
    writer.add(documentToEntity('demo-kill', '(default)', path, new Map([['p', { type: 'string', value: path }]])));
  }
  writer.close();
  const dataDir = tempDataDir();
  const imported = await hearthCli(['import', 'firestore', folder, '--collection-ids', 'notes', '--database', 'only-notes'], dataDir);
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stderr, /Imported 2 document\(s\) into demo-kill\/only-notes .*read 5 record\(s\).*3 left out by --collection-ids/);
  const rows = await storedRows(dataDir, "SELECT collection_id AS c FROM fs_documents WHERE db = 'demo-kill/only-notes'");
  assert.deepEqual(rows.map((row) => String(row.c)).sort(), ['notes', 'notes']);

  const everything = await hearthCli(['import', 'firestore', folder], dataDir);
  assert.equal(everything.code, 0, everything.stderr);
  const out = join(tempDataDir(), 'items-only');
  const exported = await hearthCli(['export', 'firestore', out, '--project', 'demo-kill', '--collection-ids', 'items,other'], dataDir);
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stderr, /Exported 3 document\(s\) of demo-kill\/\(default\)/);
  const back = tempDataDir();
  const again = await hearthCli(['import', 'firestore', out], back);
  assert.equal(again.code, 0, again.stderr);
  const paths = await storedRows(back, "SELECT collection_id AS c FROM fs_documents WHERE db = 'demo-kill/(default)'");
  assert.deepEqual(paths.map((row) => String(row.c)).sort(), ['items', 'items', 'other']);
});
