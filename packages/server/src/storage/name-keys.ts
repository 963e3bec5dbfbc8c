/**
 * How document names are ordered in storage: both stores keep a document's name as these bytes,
 * whose byte order is Firestore's name order (a parent before its descendants; numeric ids
 * `__id7__` before string ids, by number). The document database builds on this order; the
 * stores need it to rebuild rows (the change log) and to file ids (doc_id columns).
 */

const int64Max = (1n << 63n) - 1n;
const int64Min = -(1n << 63n);
const numericIdPattern = /^__id(-?[1-9][0-9]*)__$/;
const entryMarker = 0x01;
const segmentMarker = 0x02;

/**
 * The number of a numeric id: `__id` + a non-zero int64 in canonical decimal + `__`. Anything
 * else (`__id0__`, `__id007__`, out of range) is no numeric id (the document database refuses
 * those as ids).
 */
export function numericIdValue(segment: string): bigint | undefined {
  if (!segment.startsWith('__id')) return undefined;
  const digits = numericIdPattern.exec(segment)?.[1];
  if (digits === undefined || digits.length > 20) return undefined;
  const value = BigInt(digits);
  return value >= int64Min && value <= int64Max ? value : undefined;
}

/** The `__id<n>__` shape, whatever the range (Google says "not a 64 bit integer" when out of it). */
export function hasNumericIdShape(segment: string): boolean {
  return numericIdPattern.test(segment);
}

/**
 * Document names as segments, so that a parent sorts before its descendants. A numeric id
 * (`__id7__`) is 00 00 and its int64 as offset binary: below every string, whose escaped bytes
 * start 00 FF (a NUL) or anything above, and in numeric order among themselves.
 */
export function encodeSegments(segments: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const segment of segments) {
    parts.push(Buffer.of(segmentMarker));
    const number = numericIdValue(segment);
    if (number === undefined) {
      writeEscaped(Buffer.from(segment, 'utf8'), parts);
    } else {
      const out = Buffer.alloc(10);
      out.writeBigUInt64BE(BigInt.asUintN(64, number ^ (1n << 63n)), 2);
      parts.push(out);
    }
  }
  parts.push(Buffer.of(entryMarker));
  return Buffer.concat(parts);
}

/** A document path's key: what both stores order and look documents up by. */
export function nameKey(path: string): Buffer {
  return encodeSegments(path.split('/'));
}

/** Bytes with their NULs escaped (00 FF) and a terminator (00 01): self-delimiting, order kept. */
export function writeEscaped(bytes: Buffer, parts: Buffer[]): void {
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0) {
      parts.push(bytes.subarray(start, i), Buffer.of(0x00, 0xff));
      start = i + 1;
    }
  }
  parts.push(bytes.subarray(start), Buffer.of(0x00, 0x01));
}
