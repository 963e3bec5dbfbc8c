/**
 * The suite as `npm test` runs it: every test file and `hearth` itself (main.ts) built once by
 * esbuild (a few seconds), so each test process, and each server a test starts, loads a few
 * JavaScript files instead of having tsx compile and link some 300 TypeScript modules again: about
 * 1.3 CPU seconds a process, hundreds of times a run, on a 2-core machine. The code is the same:
 * esbuild strips the types and joins the modules, and each module's `import.meta` still names its
 * own source file, so the assets, fixtures, the writer thread and the functions worker are found
 * where they are.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { testBuildDir } from '../tests/helpers/hearth-command.js';

const repoRoot = resolve(import.meta.dirname, '..');

/**
 * `import.meta.url`, `.dirname` and `.filename` of each module become constants naming its source
 * file. esbuild's `define` rewrites the expressions only (never text inside a string), and the
 * constants are declared in each module's own scope (renamed apart where modules are joined).
 */
const keepImportMeta: Plugin = {
  name: 'keep-import-meta',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /\.ts$/ }, async (args) => {
      const meta = `const __metaUrl = ${JSON.stringify(pathToFileURL(args.path).href)}, __metaDirname = ${JSON.stringify(dirname(args.path))}, __metaFilename = ${JSON.stringify(args.path)};\n`;
      const source = await readFile(args.path, 'utf8');
      // A `#!` line must stay the first.
      const shebang = source.startsWith('#!') ? source.slice(0, source.indexOf('\n') + 1) : '';
      return { contents: shebang + meta + source.slice(shebang.length), loader: 'ts' };
    });
  },
};

/** Builds the test files (paths relative to the repository) and main.ts into testBuildDir. */
export async function buildForTests(testFiles: string[]): Promise<void> {
  await build({
    entryPoints: [...testFiles.map((file) => join(repoRoot, file)), join(repoRoot, 'packages/server/src/main.ts')],
    outdir: testBuildDir,
    outbase: repoRoot,
    // Modules several entries share go in shared chunks, and what the server loads only when used
    // (the demo identity provider, the S3 client) stays in chunks of its own, loaded only then.
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    define: { 'import.meta.url': '__metaUrl', 'import.meta.dirname': '__metaDirname', 'import.meta.filename': '__metaFilename' },
    plugins: [keepImportMeta],
    logLevel: 'warning',
  });
}
