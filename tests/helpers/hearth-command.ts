/**
 * How tests start `hearth` in its own process. Under `npm test` it is the build the runner made
 * (scripts/test-build.ts: main.ts and every test file joined by esbuild, each module's
 * `import.meta` still naming its own source file), which starts without tsx compiling some 300
 * TypeScript modules again (about 1.3 CPU seconds a process, hundreds of times a run). A test file
 * run on its own (`node --import tsx --test FILE`) starts main.ts through tsx.
 */
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * Inside the server's package, so its own dependencies (packages/server/node_modules) resolve as
 * they do from its sources; the root's are found above it.
 */
export const testBuildDir = join(repoRoot, 'packages/server/.test-build');

/** Set by `npm test` for every job once the build is there. */
export const testBuildVariable = 'HEARTH_TEST_BUILD';

/** Where the build put a source file (`tests/auth/http.test.ts` → `.../tests/auth/http.test.js`). */
export function builtFile(sourceFile: string): string {
  return join(testBuildDir, relative(repoRoot, resolve(repoRoot, sourceFile)).replace(/\.ts$/, '.js'));
}

/** Node's arguments that run `hearth`: the built main.js under `npm test`, else main.ts through tsx. */
export function hearthCommand(): string[] {
  const built = builtFile('packages/server/src/main.ts');
  if (process.env[testBuildVariable] === '1' && existsSync(built)) return ['--enable-source-maps', built];
  return ['--import', 'tsx', join(repoRoot, 'packages/server/src/main.ts')];
}
