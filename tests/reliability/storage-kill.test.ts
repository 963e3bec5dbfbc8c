/**
 * kill -9 during concurrent uploads: Hearth runs as its own process (--dev, a data folder; with
 * HEARTH_TEST_BACKEND=postgres its metadata in PostgreSQL), 12 clients upload one-shot and resumable
 * objects of 20 KiB to 3 MiB without pause, and the process is killed with SIGKILL mid-stream. After
 * a restart on the same folder: every acknowledged upload is there with its exact bytes, every object
 * the metadata lists has whole bytes matching its MD5 (no orphaned or torn metadata), no temporary file
 * is left, and bytes no object points at are swept. Then the same against Ceph RGW (--storage-url)
 * when it can be started here.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startRgw, type Rgw } from '../helpers/ceph-rgw.js';
import { freePort, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';
import { storedFiles, testBucket } from '../helpers/storage-clients.js';

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64');

interface Acknowledged {
  name: string;
  md5: string;
}

async function uploadLoop(url: string, client: number, stop: () => boolean, acknowledged: Acknowledged[]): Promise<void> {
  for (let i = 0; !stop(); i++) {
    const name = `crash/c${client}-${i}.bin`;
    const bytes = randomBytes(20 * 1024 + Math.floor(Math.random() * 3 * 1024 * 1024));
    try {
      if (i % 3 === 2) {
        // Resumable in two chunks.
        const start = await fetch(`${url}/v0/b/${testBucket}/o?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' }, body: '{}' });
        if (start.status !== 200) continue;
        const session = start.headers.get('x-goog-upload-url')!;
        const half = Math.floor(bytes.length / 2);
        const first = await fetch(session, { method: 'POST', headers: { 'x-goog-upload-command': 'upload', 'x-goog-upload-offset': '0' }, body: bytes.subarray(0, half) });
        if (first.status !== 200) continue;
        const last = await fetch(session, { method: 'POST', headers: { 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': String(half) }, body: bytes.subarray(half) });
        if (last.status === 200 && ((await last.json()) as { md5Hash: string }).md5Hash === md5(bytes)) acknowledged.push({ name, md5: md5(bytes) });
      } else {
        const response = await fetch(`${url}/v0/b/${testBucket}/o?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: bytes });
        if (response.status === 200 && ((await response.json()) as { md5Hash: string }).md5Hash === md5(bytes)) acknowledged.push({ name, md5: md5(bytes) });
      }
    } catch {
      // the server died mid-request: this upload was never acknowledged
    }
  }
}

async function crashAndCheck(extraArgs: string[], env: NodeJS.ProcessEnv, checkFolder: boolean): Promise<void> {
  const dataDir = tempDataDir();
  const port = await freePort();
  const args = ['--port', String(port), '--data', dataDir, '--dev', '--project', 'demo-test', '--log-level', 'warn', ...extraArgs];
  let server: SpawnedHearth | undefined = await spawnHearth(args, env);
  try {
    const acknowledged: Acknowledged[] = [];
    let stopped = false;
    const clients = Array.from({ length: 12 }, (_, client) => uploadLoop(server!.url, client, () => stopped, acknowledged));
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < 25 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await server.stop('SIGKILL');
    stopped = true;
    await Promise.all(clients);
    assert.ok(acknowledged.length >= 25, `uploads were acknowledged before the kill (${acknowledged.length})`);

    server = await spawnHearth(args, env);
    for (const { name, md5: expected } of acknowledged) {
      const response: Response = await fetch(`${server.url}/v0/b/${testBucket}/o/${encodeURIComponent(name)}?alt=media`);
      assert.equal(response.status, 200, `acknowledged ${name} is there`);
      assert.equal(md5(new Uint8Array(await response.arrayBuffer())), expected, `acknowledged ${name} is whole`);
    }
    const listed = (await (await fetch(`${server.url}/v0/b/${testBucket}/o?prefix=crash/`)).json()) as { items: { name: string }[] };
    assert.ok(listed.items.length >= acknowledged.length);
    for (const { name } of listed.items) {
      const metadata = (await (await fetch(`${server.url}/v0/b/${testBucket}/o/${encodeURIComponent(name)}`)).json()) as { md5Hash: string; size: string };
      const bytes: Uint8Array = new Uint8Array(await (await fetch(`${server.url}/v0/b/${testBucket}/o/${encodeURIComponent(name)}?alt=media`)).arrayBuffer());
      assert.equal(bytes.length, Number(metadata.size), `${name}: its bytes are all there`);
      assert.equal(md5(bytes), metadata.md5Hash, `${name}: its bytes match its metadata`);
    }
    if (checkFolder) {
      assert.equal(storedFiles(dataDir).tmp.length, 0, 'no temporary file survives a restart');
      // Bytes renamed into place whose metadata never committed are swept after the start.
      const deadlineSweep = Date.now() + 10_000;
      while (storedFiles(dataDir).blobs.length !== listed.items.length && Date.now() < deadlineSweep) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(storedFiles(dataDir).blobs.length, listed.items.length, 'one blob per object, none orphaned');
    }
  } finally {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('kill -9 during concurrent uploads', () => {
  test('bytes in the data folder', async () => {
    await crashAndCheck([], {}, true);
  });

  describe('bytes in Ceph RGW', () => {
    let rgw: Rgw | string;
    before(async () => {
      rgw = await startRgw();
    });
    after(async () => {
      if (typeof rgw !== 'string') await rgw.stop();
    });
    test('--storage-url s3://...', async (context) => {
      if (typeof rgw === 'string') return context.skip(rgw);
      await crashAndCheck(['--storage-url', await rgw.storageUrl('hearth-crash')], { AWS_ACCESS_KEY_ID: rgw.accessKey, AWS_SECRET_ACCESS_KEY: rgw.secretKey }, false);
    });
  });
});
