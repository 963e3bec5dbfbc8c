/**
 * A TLS-terminating reverse proxy in front of a test Hearth, as docs/STORAGE.md ("Production over
 * TLS") and docs/DEPLOYMENT.md set one up: Debian's nginx with a certificate the test makes with
 * openssl (never the system service), answering https on a free loopback port for the given host
 * names, which Chromium maps to 127.0.0.1 (`--host-resolver-rules`) and trusts by the certificate's
 * key (`--ignore-certificate-errors-spki-list`), so no system trust store or DNS is touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './hearth.js';
import { findNginx } from './nginx.js';

export interface TlsProxy {
  port: number;
  /** The folder nginx runs in (a static site's files may go under it). */
  prefix: string;
  /** Chromium flags: the host names mapped to the proxy, its certificate trusted by key. */
  chromiumArgs: string[];
  stop(): Promise<void>;
}

export interface TlsProxyOptions {
  /** http://127.0.0.1:PORT of Hearth. */
  upstream: string;
  /** The loopback port to answer on (chosen before Hearth starts when Hearth's --public-url names it); a free one otherwise. */
  port?: number;
  /** Names proxied to Hearth (the certificate covers them and every `extraHosts` name). */
  proxiedHosts: string[];
  /** More names the certificate covers, for `extraServers`. */
  extraHosts?: string[];
  /** nginx `server` blocks of the test's own (a static site), given the port and the prefix. */
  extraServers?: (port: number, prefix: string) => string;
}

/** A self-signed certificate (P-256) for these names, and the base64 SHA-256 of its public key (what Chromium pins). */
export function makeCertificate(dir: string, names: string[]): { cert: string; key: string; spki: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make the certificate:\n${made.stderr}`);
  const publicKey = new X509Certificate(readFileSync(cert)).publicKey.export({ type: 'spki', format: 'der' });
  return { cert, key, spki: createHash('sha256').update(publicKey).digest('base64') };
}

export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  const binary = findNginx();
  if (!binary) throw new Error('nginx is not installed (apt-get install nginx)');
  const prefix = mkdtempSync(join(tmpdir(), 'hearth-tls-'));
  mkdirSync(join(prefix, 'logs'));
  const port = options.port ?? (await freePort());
  const names = [...options.proxiedHosts, ...(options.extraHosts ?? [])];
  const certificate = makeCertificate(prefix, names);
  const config = join(prefix, 'nginx.conf');
  // As docs/STORAGE.md says: uploads of any size streamed through (no body limit, no request
  // buffering), downloads streamed back (no response buffering), the original Host and scheme passed on.
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
  types { text/html html; text/javascript js; }
  ssl_certificate ${certificate.cert};
  ssl_certificate_key ${certificate.key};
  server {
    listen 127.0.0.1:${port} ssl;
    server_name ${options.proxiedHosts.join(' ')};
    client_max_body_size 0;
    location / {
      proxy_pass ${options.upstream};
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
    }
  }
${options.extraServers?.(port, prefix) ?? ''}
}
`,
  );
  const checked = spawnSync(binary, ['-t', '-p', prefix, '-c', config], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`nginx refused its configuration:\n${checked.stderr}`);
  const child: ChildProcess = spawn(binary, ['-p', prefix, '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Up when its port takes connections (a TLS handshake needs the names; a TCP connect is enough).
  const { connect } = await import('node:net');
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${output}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const mapped = names.map((name) => (name.endsWith('.googleapis.com') ? `MAP ${name} 127.0.0.1:${port}` : `MAP ${name} 127.0.0.1`));
  return {
    port,
    prefix,
    chromiumArgs: [`--host-resolver-rules=${mapped.join(',')}`, `--ignore-certificate-errors-spki-list=${certificate.spki}`],
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
