/**
 * A real S3 service for the storage tests: Ceph's RADOS Gateway from Debian (ceph-mon, ceph-osd,
 * radosgw), a one-monitor, one-OSD cluster on an in-memory object store, everything in one scratch
 * folder, on free loopback ports (shared/research/ceph-rgw-single-node.md). `.ci/run` installs the
 * packages; without them `startRgw` returns the reason to skip.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './hearth.js';

const run = promisify(execFile);

export interface Rgw {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** `s3://bucket?endpoint=...` for --storage-url, with a bucket made for it. */
  storageUrl(bucket: string): Promise<string>;
  stop(): Promise<void>;
}

export function rgwMissing(): string | undefined {
  for (const binary of ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'monmaptool', 'ceph']) {
    if (!['/usr/bin', '/usr/sbin', '/bin'].some((dir) => existsSync(join(dir, binary)))) return `Ceph's ${binary} is not installed (.ci/run installs ceph-mon ceph-osd radosgw ceph-common)`;
  }
  return undefined;
}

export async function startRgw(): Promise<Rgw | string> {
  const missing = rgwMissing();
  if (missing) return missing;
  const root = mkdtempSync(join(tmpdir(), 'hearth-rgw-'));
  const monPort = await freePort();
  const rgwPort = await freePort();
  const fsid = randomUUID();
  const conf = join(root, 'ceph.conf');
  for (const dir of ['mon', 'osd', 'rgw', 'run', 'log']) mkdirSync(join(root, dir));
  writeFileSync(
    conf,
    `[global]
fsid = ${fsid}
mon host = 127.0.0.1:${monPort}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd objectstore = memstore
memstore device bytes = 2147483648
osd crush chooseleaf type = 0
run dir = ${root}/run
admin socket = ${root}/run/$name.asok
log file = ${root}/log/$name.log
pid file = ${root}/run/$name.pid
[mon.a]
mon data = ${root}/mon
[osd.0]
osd data = ${root}/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${root}/rgw
`,
  );
  const children: ChildProcess[] = [];
  const pids = () => ['mon.a', 'osd.0', 'client.rgw'].map((name) => join(root, 'run', `${name}.pid`)).filter(existsSync).map((file) => Number(readFileSync(file, 'utf8').trim()));
  const stop = async () => {
    for (const pid of pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    for (const child of children) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await run('monmaptool', ['--create', '--add', 'a', `127.0.0.1:${monPort}`, '--fsid', fsid, join(root, 'monmap')]);
    await run('ceph-mon', ['-c', conf, '--mkfs', '-i', 'a', '--monmap', join(root, 'monmap')]);
    await run('ceph-mon', ['-c', conf, '-i', 'a']);
    await run('ceph', ['-c', conf, 'osd', 'create'], { timeout: 60_000 });
    await run('ceph-osd', ['-c', conf, '-i', '0', '--mkfs']);
    await run('ceph-osd', ['-c', conf, '-i', '0']);
    await run('ceph', ['-c', conf, 'osd', 'crush', 'add', 'osd.0', '1.0', 'host=localhost'], { timeout: 60_000 });
    await run('ceph', ['-c', conf, 'osd', 'crush', 'move', 'localhost', 'root=default'], { timeout: 60_000 });
    const gateway = spawn('radosgw', ['-c', conf, '-n', 'client.rgw', '-f'], { stdio: 'ignore' });
    children.push(gateway);
    const accessKey = 'hearthtest';
    const secretKey = 'hearthtestsecret';
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        if ((await fetch(endpoint)).status < 500) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error('radosgw did not answer within two minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await run('radosgw-admin', ['-c', conf, 'user', 'create', '--uid=hearth', '--display-name=hearth', `--access-key=${accessKey}`, `--secret=${secretKey}`], { timeout: 60_000 });
    return {
      endpoint,
      accessKey,
      secretKey,
      async storageUrl(bucket: string) {
        const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey } });
        try {
          await client.send(new CreateBucketCommand({ Bucket: bucket }));
        } finally {
          client.destroy();
        }
        return `s3://${bucket}?endpoint=${encodeURIComponent(endpoint)}`;
      },
      stop,
    };
  } catch (error) {
    await stop();
    return `Ceph RGW could not be started: ${(error as Error).message.split('\n')[0]}`;
  }
}
