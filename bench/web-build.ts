/** The web app's builds the web bench compares: this checkout's, and a baseline commit's built in a temporary folder. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '..');

/** The last commit before the app was split by route: one 896 kB script. */
export const defaultBaselineRev = '65673a2';

function viteBuild(webDir: string): void {
  execFileSync(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error'], { cwd: webDir, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Builds packages/web of this checkout (its dist/) and returns the folder served. */
export function buildCurrent(): string {
  const webDir = join(repoRoot, 'packages/web');
  viteBuild(webDir);
  return join(webDir, 'dist');
}

export interface BaselineBuild {
  dist: string;
  rev: string;
  remove(): void;
}

/** Checks packages/web out of `rev` into a temporary folder (sharing this checkout's node_modules) and builds it there. */
export function buildBaseline(rev: string): BaselineBuild {
  const folder = mkdtempSync(join(tmpdir(), 'hearth-web-baseline-'));
  try {
    const archive = execFileSync('git', ['archive', '--format=tar', rev, 'packages/web'], { cwd: repoRoot, maxBuffer: 256 * 2 ** 20 });
    execFileSync('tar', ['-x', '-C', folder], { input: archive });
    symlinkSync(join(repoRoot, 'node_modules'), join(folder, 'node_modules'), 'dir');
    const webDir = join(folder, 'packages/web');
    if (existsSync(join(repoRoot, 'packages/web/node_modules'))) symlinkSync(join(repoRoot, 'packages/web/node_modules'), join(webDir, 'node_modules'), 'dir');
    viteBuild(webDir);
    const dist = join(webDir, 'dist');
    if (!existsSync(join(dist, 'index.html'))) throw new Error(`the baseline ${rev} built no index.html`);
    readFileSync(join(dist, 'index.html'));
    return { dist, rev, remove: () => rmSync(folder, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}
