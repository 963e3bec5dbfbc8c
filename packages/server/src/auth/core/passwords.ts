import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { isImportedHash, verifyImportedHash } from './imported-passwords.js';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** 2^15 × 8 × 128 bytes = 32 MiB and about 60 ms a hash on these machines; see bench/. */
export const defaultScryptParams: ScryptParams = { N: 1 << 15, r: 8, p: 1 };
export const keyLength = 64;

/** scrypt hashes queued or running on libuv's thread pool right now. */
let hashesInFlight = 0;

/** libuv's thread pool size: what node:crypto's scrypt and sign callbacks share. */
const threadPoolSize = Math.max(1, Number(process.env.UV_THREADPOOL_SIZE) || 4);

/**
 * Whether every thread of the pool has a password hash (tens of milliseconds each) to run: a short
 * job queued now (an ID token's signature) would wait behind them. tokens.ts signs on the event
 * loop instead then (a fraction of a millisecond), so a sign-in's answer does not queue for the
 * pool twice and the hashes keep the pool to themselves.
 */
export function threadPoolBusyWithHashes(): boolean {
  return hashesInFlight >= threadPoolSize;
}

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  hashesInFlight++;
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  }).finally(() => {
    hashesInFlight--;
  });
}

/** `scrypt$N$r$p$salt$hash`, parameters inside so they can change without breaking old hashes. */
export async function hashPassword(password: string, params: ScryptParams = defaultScryptParams): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isImportedHash(stored)) {
    // Some imported algorithms are far faster than scrypt: the decoy keeps the answer as slow as an unknown email's.
    const [matched] = await Promise.all([verifyImportedHash(password, stored), verifyAgainstDecoy(password)]);
    return matched;
  }
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(N), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash that is not Hearth's scrypt at today's parameters: re-hashed at the owner's next sign-in. */
export function needsRehash(stored: string): boolean {
  const [scheme, N, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(N) !== defaultScryptParams.N || Number(r) !== defaultScryptParams.r || Number(p) !== defaultScryptParams.p;
}

/**
 * Burns the same time as a real check, so an unknown email answers no faster than a wrong password.
 */
let decoyHash: Promise<string> | undefined;
export async function verifyAgainstDecoy(password: string): Promise<false> {
  await verifyPassword(password, await prepareDecoy());
  return false;
}

/** Made once at start-up, so even the first unknown email costs exactly one check. */
export function prepareDecoy(): Promise<string> {
  decoyHash ??= hashPassword(randomBytes(12).toString('hex'));
  return decoyHash;
}
