/**
 * Learns a code base's functions as the Firebase CLI does (deploy/functions/runtimes/node): runs the
 * code base's own `firebase-functions` binary with FUNCTIONS_CONTROL_API=true on a free loopback
 * port, reads `GET /__/functions.yaml`, then asks it to quit (`/__/quitquitquit`). The code is
 * loaded in that child process, never in Hearth's.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { ManifestError, parseManifest, type FunctionEndpoint } from './manifest.js';

/** How long the code base may take to load and answer (the CLI waits 10 s per try, for a while). */
const discoveryTimeoutMs = 60_000;

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** The code base's firebase-functions binary, as its own node_modules resolves it. */
export function functionsBinary(codeBase: string): string {
  if (!existsSync(join(codeBase, 'package.json'))) throw new ManifestError(`${codeBase} has no package.json: --functions names the folder of a functions code base`);
  let entry: string;
  try {
    // Its exports map has no ./package.json: the main module, then up to the package's folder.
    entry = createRequire(join(codeBase, 'package.json')).resolve('firebase-functions');
  } catch {
    throw new ManifestError(`${codeBase} cannot resolve firebase-functions: run npm install in it`);
  }
  let folder = dirname(entry);
  while (!existsSync(join(folder, 'lib/bin/firebase-functions.js')) && dirname(folder) !== folder) folder = dirname(folder);
  return join(folder, 'lib/bin/firebase-functions.js');
}

/** The environment a child running user code gets: the machine's basics, nothing of Hearth's own secrets. */
export function baseEnvironment(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'TZ'];
  return Object.fromEntries(keep.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]]));
}

export async function discoverFunctions(codeBase: string, env: NodeJS.ProcessEnv): Promise<FunctionEndpoint[]> {
  const binary = functionsBinary(codeBase);
  const port = await freeLoopbackPort();
  const child = spawn(process.execPath, [binary, codeBase], {
    cwd: codeBase,
    env: { ...env, FUNCTIONS_CONTROL_API: 'true', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  try {
    const deadline = Date.now() + discoveryTimeoutMs;
    for (;;) {
      if (exited) throw new ManifestError(`the functions code base exited before it served its manifest:\n${output}`);
      if (Date.now() > deadline) throw new ManifestError(`the functions code base served no manifest within ${discoveryTimeoutMs / 1000} s:\n${output}`);
      const answer = await fetch(`http://127.0.0.1:${port}/__/functions.yaml`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
      if (!answer) {
        await new Promise((wake) => setTimeout(wake, 100));
        continue;
      }
      const body = await answer.text();
      if (!answer.ok) throw new ManifestError(`the functions code base failed to load: ${body}`);
      return parseManifest(body);
    }
  } finally {
    if (!exited) {
      await fetch(`http://127.0.0.1:${port}/__/quitquitquit`, { method: 'POST', signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      child.kill('SIGKILL');
    }
  }
}
