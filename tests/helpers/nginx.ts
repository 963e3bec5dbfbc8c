/**
 * A real nginx (Debian's package; .ci/run installs it) as the reverse proxy of docs/DEPLOYMENT.md, started by
 * a test with its own configuration, prefix and free port (never the system service). It connects to the
 * upstream from 127.0.0.1 and appends the client's address to X-Forwarded-For, as the documented config does.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './hearth.js';

export interface Nginx {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const candidates = ['/usr/sbin/nginx', '/usr/bin/nginx'];

export function findNginx(): string | undefined {
  return candidates.find((path) => existsSync(path));
}

/** nginx in front of `upstream` (http://127.0.0.1:PORT), answering on a free loopback port. */
export async function startNginx(upstream: string): Promise<Nginx> {
  const binary = findNginx();
  if (!binary) throw new Error('nginx is not installed (apt-get install nginx)');
  const prefix = mkdtempSync(join(tmpdir(), 'hearth-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const port = await freePort();
  const config = join(prefix, 'nginx.conf');
  writeFileSync(
    config,
    `daemon off;
master_process off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${upstream};
      proxy_bind 127.0.0.1;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
    }
  }
}
`,
  );
  const checked = spawnSync(binary, ['-t', '-p', prefix, '-c', config], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`nginx refused its configuration:\n${checked.stderr}`);
  const child: ChildProcess = spawn(binary, ['-p', prefix, '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`nginx did not answer:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
