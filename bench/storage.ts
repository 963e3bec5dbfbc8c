/**
 * `npm run bench -- storage`: Cloud Storage upload and download throughput of Hearth (its own
 * process, --dev, firebase/storage's v0 media upload and alt=media download) for 4 KiB, 1 MiB and
 * 100 MiB objects, beside a raw write with fsync (and rename) to the same disk and a raw read, in
 * the same run; 100 concurrent 1 MiB uploads beside 100 concurrent raw writes; the server's memory
 * (RSS from /proc) during a 1 GiB upload streamed from this process; and, when Ceph RGW can be
 * started here, uploads through Hearth with --storage-url beside a raw S3 PutObject to the same
 * service. Settings: BENCH_STORAGE_GIB (1: the big upload's size).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startRgw } from '../tests/helpers/ceph-rgw.js';
import { freePort, spawnHearth, tempDataDir, type SpawnedHearth } from '../tests/helpers/hearth.js';
import { envNumber, machineLine, progress } from './env.js';
import { renderTable } from './stats.js';

const bucket = 'demo-bench.appspot.com';
const sizes = [
  { label: '4 KiB', bytes: 4 * 1024, count: 300 },
  { label: '1 MiB', bytes: 1024 * 1024, count: 60 },
  { label: '100 MiB', bytes: 100 * 1024 * 1024, count: 3 },
];

interface Measured {
  seconds: number;
  bytes: number;
  ops: number;
}

const mbPerSecond = (m: Measured) => m.bytes / m.seconds / 2 ** 20;

async function timed(count: number, bytes: number, work: (i: number) => Promise<void>): Promise<Measured> {
  const started = performance.now();
  for (let i = 0; i < count; i++) await work(i);
  return { seconds: (performance.now() - started) / 1000, bytes: bytes * count, ops: count };
}

/** The physical floor of an upload: write, fsync, rename, fsync the folder. */
async function rawWrite(folder: string, name: string, body: Uint8Array): Promise<void> {
  const temporary = join(folder, `${name}.tmp`);
  const handle = await open(temporary, 'w', 0o600);
  await handle.write(body);
  await handle.sync();
  await handle.close();
  await rename(temporary, join(folder, name));
  const dir = await open(folder, 'r');
  await dir.sync();
  await dir.close();
}

async function upload(server: SpawnedHearth, name: string, body: Uint8Array<ArrayBuffer>): Promise<void> {
  const response = await fetch(`${server.url}/v0/b/${bucket}/o?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
  if (response.status !== 200) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

async function download(server: SpawnedHearth, name: string): Promise<number> {
  const response = await fetch(`${server.url}/v0/b/${bucket}/o/${encodeURIComponent(name)}?alt=media`);
  return (await response.arrayBuffer()).byteLength;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function startServer(dataDir: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SpawnedHearth> {
  return spawnHearth(['--port', String(await freePort()), '--data', dataDir, '--dev', '--project', 'demo-bench', '--log-level', 'warn', '--max-uploads-per-address', '128', ...extra], env);
}

export async function runStorageBench(): Promise<void> {
  console.log('Cloud Storage (issue 31): Hearth beside the physical floor, same disk, same run');
  console.log(machineLine());
  const dataDir = tempDataDir();
  const rawFolder = join(dataDir, 'raw-baseline');
  mkdirSync(rawFolder, { recursive: true });
  const server = await startServer(dataDir);
  const rows: string[][] = [];
  const row = (name: string, hearth: Measured, baselineName: string, baseline: Measured) =>
    rows.push([name, `${mbPerSecond(hearth).toFixed(1)} MB/s`, `${(hearth.ops / hearth.seconds).toFixed(1)}/s`, baselineName, `${mbPerSecond(baseline).toFixed(1)} MB/s`, (mbPerSecond(hearth) / mbPerSecond(baseline)).toFixed(2)]);
  try {
    for (const size of sizes) {
      progress(`${size.label}: uploads and downloads`);
      const body = new Uint8Array(randomBytes(size.bytes));
      const up = await timed(size.count, size.bytes, (i) => upload(server, `bench/${size.label}/${i}`, body));
      const raw = await timed(size.count, size.bytes, (i) => rawWrite(rawFolder, `${size.label.replace(' ', '')}-${i}`, body));
      row(`upload ${size.label}`, up, 'write+fsync+rename', raw);
      const down = await timed(size.count, size.bytes, async (i) => void (await download(server, `bench/${size.label}/${i}`)));
      const read = await timed(size.count, size.bytes, async (i) => void (await readFile(join(rawFolder, `${size.label.replace(' ', '')}-${i}`))));
      row(`download ${size.label}`, down, 'readFile', read);
    }
    progress('100 concurrent 1 MiB uploads');
    const body = new Uint8Array(randomBytes(1024 * 1024));
    let started = performance.now();
    await Promise.all(Array.from({ length: 100 }, (_, i) => upload(server, `bench/concurrent/${i}`, body)));
    const concurrent = { seconds: (performance.now() - started) / 1000, bytes: 100 * body.length, ops: 100 };
    started = performance.now();
    await Promise.all(Array.from({ length: 100 }, (_, i) => rawWrite(rawFolder, `concurrent-${i}`, body)));
    row('100 concurrent 1 MiB uploads', concurrent, '100 concurrent writes', { seconds: (performance.now() - started) / 1000, bytes: 100 * body.length, ops: 100 });
    console.log(renderTable(['bytes on disk', 'Hearth', 'ops', 'baseline', 'baseline', 'ratio'], rows));

    const gib = envNumber('BENCH_STORAGE_GIB', 1);
    progress(`${gib} GiB upload: the server's memory`);
    const total = Math.round(gib * 2 ** 30);
    const chunk = randomBytes(1024 * 1024);
    const before = rssBytes(server.child.pid!);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(server.child.pid!))), 50);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += piece.length;
        controller.enqueue(piece);
      },
    });
    started = performance.now();
    const response = await fetch(`${server.url}/v0/b/${bucket}/o?name=bench%2Fbig.bin`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit & { duplex: 'half' });
    const answer = (await response.json()) as { size?: string };
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(
      `\n${gib} GiB upload (streamed, no Content-Length): ${answer.size} bytes in ${seconds.toFixed(1)} s (${(total / seconds / 2 ** 20).toFixed(0)} MB/s); server RSS ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${((peak - before) / 2 ** 20).toFixed(0)} MiB)`,
    );
  } finally {
    await server.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
  await s3Bench();
}

async function s3Bench(): Promise<void> {
  progress('starting Ceph RGW for the S3 rows');
  const rgw = await startRgw();
  if (typeof rgw === 'string') {
    console.log(`\nS3 rows skipped: ${rgw}`);
    return;
  }
  const dataDir = tempDataDir();
  const env = { AWS_ACCESS_KEY_ID: rgw.accessKey, AWS_SECRET_ACCESS_KEY: rgw.secretKey };
  const server = await startServer(dataDir, ['--storage-url', await rgw.storageUrl('hearth-bench')], env);
  const client = new S3Client({ endpoint: rgw.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: rgw.accessKey, secretAccessKey: rgw.secretKey } });
  await rgw.storageUrl('raw-bench');
  const rows: string[][] = [];
  try {
    for (const size of sizes) {
      const count = Math.max(2, Math.ceil(size.count / 3));
      progress(`S3 ${size.label}`);
      const body = new Uint8Array(randomBytes(size.bytes));
      const hearth = await timed(count, size.bytes, (i) => upload(server, `bench/${size.label}/${i}`, body));
      const raw = await timed(count, size.bytes, (i) => client.send(new PutObjectCommand({ Bucket: 'raw-bench', Key: `raw/${size.label}/${i}`, Body: body })).then(() => undefined));
      rows.push([`upload ${size.label}`, `${mbPerSecond(hearth).toFixed(1)} MB/s`, `${mbPerSecond(raw).toFixed(1)} MB/s`, (mbPerSecond(hearth) / mbPerSecond(raw)).toFixed(2)]);
    }
    console.log(`\nbytes in Ceph RGW (memstore), Hearth --storage-url beside a raw PutObject to the same service`);
    console.log(renderTable(['S3', 'Hearth', 'raw PutObject', 'ratio'], rows));
  } finally {
    client.destroy();
    await server.stop('SIGTERM');
    await rgw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
