/**
 * The built web app is served precompressed: the build writes .br and .gz beside each script and
 * style, and the server sends the one the browser accepts (with Vary: Accept-Encoding), or the
 * file itself to a client that accepts neither; the bytes always decode to the built file.
 * Needs `npm run build -w packages/web` first.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { assertBrowserReady, webRoot } from '../helpers/browser.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
});
after(async () => server?.close());

function get(path: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('every large script and style has .br and .gz copies that decode to it', () => {
  const assets = join(webRoot, 'assets');
  const built = readdirSync(assets).filter((name) => /\.(js|css)$/.test(name) && readFileSync(join(assets, name)).length >= 1024);
  assert.ok(built.length >= 3, `built files: ${built.join(', ')}`);
  for (const name of built) {
    const raw = readFileSync(join(assets, name));
    assert.deepEqual(brotliDecompressSync(readFileSync(join(assets, `${name}.br`))), raw, `${name}.br`);
    assert.deepEqual(gunzipSync(readFileSync(join(assets, `${name}.gz`))), raw, `${name}.gz`);
  }
});

test('the server sends brotli, gzip or the file itself as accepted, and says it varies', async () => {
  const script = readdirSync(join(webRoot, 'assets')).find((name) => name.startsWith('index-') && name.endsWith('.js'))!;
  const raw = readFileSync(join(webRoot, 'assets', script));
  const br = await get(`/assets/${script}`, 'gzip, deflate, br');
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.deepEqual(brotliDecompressSync(br.body), raw);
  assert.ok(br.body.length < raw.length / 2, `brotli sent ${br.body.length} of ${raw.length} bytes`);
  const gz = await get(`/assets/${script}`, 'gzip');
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gz.body), raw);
  const plain = await get(`/assets/${script}`);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.deepEqual(plain.body, raw);
  for (const answer of [br, gz, plain]) assert.match(String(answer.headers.vary), /Accept-Encoding/i);
  assert.match(String(br.headers['content-type']), /javascript/);
});

test('the compressed copies are not pages of their own, and unknown assets are 404', async () => {
  assert.equal((await get('/assets/no-such-file.js', 'br')).status, 404);
});
