/**
 * What a key ring shared by several processes must do (on PostgreSQL, or in the data folder of
 * --workers on SQLite): the first use makes one key, two processes due for a rotation at once add
 * one, and a key one process adds is found by another that meets it. `ringOf(n)` opens the ring
 * as process `n` (0 or 1) reaches it.
 */
import assert from 'node:assert/strict';
import { SigningKeyRing } from '../../packages/server/src/auth/core/signing-keys.js';
import type { KeyRingStore } from '../../packages/server/src/storage/key-ring-store.js';

export async function checkSharedKeyRing(ringOf: (process: 0 | 1) => KeyRingStore): Promise<void> {
  const rotation = { rotateAfterMs: 24 * 3600_000, prepublishMs: 3600_000, publishRetiredForMs: 2 * 3600_000 };
  const [one, two, idle] = await Promise.all(([0, 1, 0] as const).map((process) => SigningKeyRing.open(ringOf(process), rotation)));
  assert.equal(await ringOf(0).read(), undefined, 'no key is made before one is needed');
  const [signer, otherSigner] = await Promise.all([one!.signingKey(), two!.signingKey()]);
  assert.equal((await one!.jwks()).keys.length, 1, 'the first use makes one key, not one per process');
  assert.equal(signer.kid, otherSigner.kid);
  assert.ok(await idle!.publicKey(signer.kid), 'a process that has not signed yet finds the first key when it meets a token');

  const later = Date.now() + 25 * 3600_000;
  await Promise.all([one!.rotateIfDue(later), two!.rotateIfDue(later)]);
  assert.equal((await one!.jwks()).keys.length, 2, 'one rotation, not two');
  assert.deepEqual(await one!.jwks(), await two!.jwks());

  // A third process rotating a day later still: the others have not read its key yet, but know it when they meet it.
  const third = await SigningKeyRing.open(ringOf(0), rotation);
  await third.rotateIfDue(later + 25 * 3600_000);
  const newest = (await third.jwks()).keys.at(-1)!.kid!;
  assert.ok(!(await two!.jwks()).keys.some((key) => key.kid === newest));
  assert.ok(await two!.publicKey(newest), 'an unknown kid is looked up in the shared ring');
}
