/**
 * An ID token's signature and password hashes share libuv's thread pool. While hashes fill it, a
 * signature queued there waited behind them (a sign-in's answer queued for the pool twice); it is
 * made on the event loop then, and still verifies.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, verify } from 'node:crypto';
import { test } from 'node:test';
import { hashPassword, threadPoolBusyWithHashes } from '../../packages/server/src/auth/core/passwords.js';
import { signRs256Jwt } from '../../packages/server/src/auth/core/tokens.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const header = { alg: 'RS256' as const, kid: 'k1', typ: 'JWT' as const };

function verifies(token: string): boolean {
  const [h, p, s] = token.split('.');
  return verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s!, 'base64url'));
}

test('with every pool thread hashing a password, a signature does not wait for a hash to finish', async () => {
  const order: string[] = [];
  const poolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const hashes = Array.from({ length: poolSize * 2 }, (_, i) => hashPassword(`password-${i}`).then(() => order.push('hash')));
  assert.equal(threadPoolBusyWithHashes(), true);
  const token = await signRs256Jwt(header, { sub: 'u1' }, privateKey).then((t) => (order.push('signature'), t));
  await Promise.all(hashes);
  assert.equal(order[0], 'signature', `order: ${order.join(', ')}`);
  assert.equal(verifies(token), true);
  assert.equal(threadPoolBusyWithHashes(), false);
});

test('with the pool free, signatures are made there and verify', async () => {
  assert.equal(threadPoolBusyWithHashes(), false);
  const tokens = await Promise.all(Array.from({ length: 8 }, (_, i) => signRs256Jwt(header, { sub: `u${i}` }, privateKey)));
  for (const token of tokens) assert.equal(verifies(token), true);
});
