import { createHash } from 'node:crypto';

/**
 * The BloomFilter of an existence filter's `unchangedNames` (google.firestore.v1.BloomFilter): the
 * full names of the documents matching a target now, so a resuming client can tell which of its
 * cached documents left without the query being run again. The hashing is the SDKs' (and Google's
 * backend's): MD5 of the UTF-8 name, its two little-endian 64-bit halves h1 and h2, bit
 * (h1 + i·h2) mod 2^64 mod bitCount for i < hashCount, bits least significant first in each byte.
 */
export interface WireBloomFilter {
  bits: { bitmap: string; padding: number };
  hashCount: number;
}

/** The false-positive rate Hearth sizes its filters for: a removed document kept by mistake costs the SDK a full re-listen. */
export const BLOOM_FALSE_POSITIVE_RATE = 0.01;

/** Sizes a filter for `count` names: the optimal bit count and hash count for the rate. */
export function bloomFilterSize(count: number, falsePositiveRate = BLOOM_FALSE_POSITIVE_RATE): { bitCount: number; hashCount: number } {
  if (count === 0) return { bitCount: 0, hashCount: 0 };
  const bitCount = Math.ceil((-count * Math.log(falsePositiveRate)) / (Math.LN2 * Math.LN2));
  const hashCount = Math.max(1, Math.round((bitCount / count) * Math.LN2));
  return { bitCount, hashCount };
}

/** Builds the filter of `names` with the given size (an empty filter has no bits and no hashes, as the SDK requires). */
export function buildBloomFilter(names: Iterable<string>, bitCount: number, hashCount: number): WireBloomFilter {
  if (bitCount === 0) return { bits: { bitmap: '', padding: 0 }, hashCount: 0 };
  const bitmap = Buffer.alloc(Math.ceil(bitCount / 8));
  const bits = BigInt(bitCount);
  for (const name of names) {
    const digest = createHash('md5').update(name, 'utf8').digest();
    const h2 = digest.readBigUInt64LE(8);
    // h1 + i·h2 (mod 2^64), one addition per hash.
    let hash = digest.readBigUInt64LE(0);
    for (let i = 0; i < hashCount; i++) {
      const index = Number(hash % bits);
      bitmap[index >> 3]! |= 1 << (index & 7);
      hash = BigInt.asUintN(64, hash + h2);
    }
  }
  return { bits: { bitmap: bitmap.toString('base64'), padding: bitmap.length * 8 - bitCount }, hashCount };
}

/** The filter of the names matching a target now, sized for the false-positive rate. */
export function unchangedNamesFilter(names: readonly string[]): WireBloomFilter {
  const { bitCount, hashCount } = bloomFilterSize(names.length);
  return buildBloomFilter(names, bitCount, hashCount);
}
