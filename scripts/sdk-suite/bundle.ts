/**
 * Bundles the SDK's test files with esbuild, for Node (mocha in a child process) or Chromium. The
 * tests import the SDK they live in by relative paths (`../../../`, `../../../internal`,
 * `../../../src/...`); here those are the published package this repository uses (firebase 12's
 * @firebase/auth), whose public and internal entry points export everything the tests take.
 */
import { build, type Plugin } from 'esbuild';
import { join } from 'node:path';

/** Where the SDK's relative imports go: the published @firebase/auth entry points. */
const sdkImports: Array<[RegExp, string]> = [
  [/^(\.\.\/)+(index)?$/, '@firebase/auth'],
  [/^(\.\.\/)+internal$/, '@firebase/auth/internal'],
  // _generateEventId is exported by the internal entry point.
  [/^(\.\.\/)+src\/core\/util\/event_id$/, '@firebase/auth/internal'],
  // TotpMultiFactorGenerator and TotpSecret are public; the policy module is imported for a type only.
  [/^(\.\.\/)+src\/(mfa\/assertions\/totp|model\/password_policy)$/, '@firebase/auth'],
];

function publishedSdk(external: boolean): Plugin {
  return {
    name: 'published-sdk',
    setup(builder) {
      builder.onResolve({ filter: /^\.\.\// }, async (args) => {
        const match = sdkImports.find(([pattern]) => pattern.test(args.path));
        if (!match || !args.importer.includes('/packages/auth/test/')) return undefined;
        // A relative import that reaches out of the test folder: the SDK's own sources.
        const outside = !args.path.startsWith('../../helpers') && !args.path.startsWith('../../integration');
        if (!outside) return undefined;
        if (external) return { path: match[1], external: true };
        return builder.resolve(match[1], { kind: args.kind, resolveDir: args.resolveDir });
      });
    },
  };
}

export interface BundleOptions {
  entryPoints: string[];
  /** node_modules folders to resolve packages from: this repository's (the SDK) and the tools' (mocha, chai, ...). */
  nodePaths: string[];
}

/**
 * For Node: one CommonJS file per test file in `outdir`, every package left to require() (the
 * child runs with NODE_PATH), so the tests and their helpers share one instance of the SDK.
 */
export async function bundleForNode(options: BundleOptions & { outdir: string; outbase: string }): Promise<string[]> {
  const result = await build({
    entryPoints: options.entryPoints,
    outdir: options.outdir,
    outbase: options.outbase,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    plugins: [publishedSdk(true)],
    logLevel: 'silent',
    metafile: true,
  });
  return Object.keys(result.metafile.outputs)
    .filter((file) => file.endsWith('.js'))
    .map((file) => (file.startsWith('/') ? file : join(process.cwd(), file)));
}

/**
 * For Chromium: one script of every test file (registered on the page's mocha globals), the
 * SDK's browser build included. `env` fills the process.env reads of the SDK's settings.ts.
 */
export async function bundleForBrowser(options: BundleOptions & { env: Record<string, string> }): Promise<string> {
  const define: Record<string, string> = { 'process.env.NODE_ENV': '"test"' };
  for (const [name, value] of Object.entries(options.env)) define[`process.env.${name}`] = JSON.stringify(value);
  const result = await build({
    stdin: {
      contents: options.entryPoints.map((file) => `import ${JSON.stringify(file)};`).join('\n'),
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    nodePaths: options.nodePaths,
    plugins: [publishedSdk(false)],
    define,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
