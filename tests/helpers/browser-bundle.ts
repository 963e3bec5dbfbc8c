import { build, type StdinOptions } from 'esbuild';

/** A test page's script bundled for Chromium (ESM, es2022, the SDK included), from a file or from source text. */
export async function bundleForBrowser(input: { entryPoint: string } | { stdin: StdinOptions }): Promise<string> {
  const result = await build({
    ...('entryPoint' in input ? { entryPoints: [input.entryPoint] } : { stdin: input.stdin }),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
