import { encodeSegments, writeEscaped } from '../../storage/name-keys.js';
import { isVector, sortedKeys, type Value } from './values.js';

export { encodeSegments };

/**
 * An order-preserving binary form of values: `Buffer.compare(encode(a), encode(b))` has the sign
 * of `compareValues(a, b)`, so the store's own byte order answers ranges and orderBy. Every
 * encoding is self-delimiting (no encoding is a prefix of another), which is what lets keys be
 * concatenated for composite indexes and complemented for descending order.
 */

const tag = {
  null: 0x05,
  boolean: 0x0a,
  nan: 0x0f,
  number: 0x10,
  timestamp: 0x14,
  string: 0x19,
  bytes: 0x1e,
  reference: 0x23,
  geo: 0x28,
  array: 0x2d,
  vector: 0x31,
  map: 0x32,
} as const;

/** Sign classes of a number, in order; only finite non-zero numbers carry exponent and fraction. */
const numberClass = { negativeInfinity: 0x01, negative: 0x02, zero: 0x03, positive: 0x04, positiveInfinity: 0x05 } as const;
const exponentBias = 1100; // doubles reach 2^-1074, int64 reaches 2^63
const endMarker = 0x00;
const entryMarker = 0x01;

export function encodeValue(value: Value): Buffer {
  const parts: Buffer[] = [];
  writeValue(value, parts);
  return Buffer.concat(parts);
}

/** The descending form: complemented bytes reverse the order of self-delimiting encodings. */
export function complement(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = 255 - bytes[i]!;
  return out;
}

function writeValue(value: Value, parts: Buffer[]): void {
  switch (value.type) {
    case 'null':
      parts.push(Buffer.of(tag.null));
      return;
    case 'boolean':
      parts.push(Buffer.of(tag.boolean, value.value ? 1 : 0));
      return;
    case 'integer':
      parts.push(Buffer.of(tag.number), encodeNumber(bigintParts(value.value)));
      return;
    case 'double':
      if (Number.isNaN(value.value)) parts.push(Buffer.of(tag.nan));
      else parts.push(Buffer.of(tag.number), encodeNumber(doubleParts(value.value)));
      return;
    case 'timestamp': {
      const out = Buffer.alloc(13);
      out[0] = tag.timestamp;
      out.writeBigUInt64BE(BigInt(value.seconds) + (1n << 63n), 1);
      out.writeUInt32BE(value.nanos, 9);
      parts.push(out);
      return;
    }
    case 'string':
      parts.push(Buffer.of(tag.string));
      writeEscaped(Buffer.from(value.value, 'utf8'), parts);
      return;
    case 'bytes':
      parts.push(Buffer.of(tag.bytes));
      writeEscaped(value.value, parts);
      return;
    case 'reference':
      parts.push(Buffer.of(tag.reference), encodeSegments(value.value.split('/')));
      return;
    case 'geo':
      parts.push(Buffer.of(tag.geo), encodeNumber(doubleParts(value.latitude)), encodeNumber(doubleParts(value.longitude)));
      return;
    case 'array':
      parts.push(Buffer.of(tag.array));
      for (const element of value.values) writeValue(element, parts);
      parts.push(Buffer.of(endMarker));
      return;
    case 'map': {
      if (isVector(value)) {
        const elements = value.fields.get('value');
        const values = elements?.type === 'array' ? elements.values : [];
        const header = Buffer.alloc(5);
        header[0] = tag.vector;
        header.writeUInt32BE(values.length, 1);
        parts.push(header);
        for (const element of values) writeValue(element, parts);
        return;
      }
      parts.push(Buffer.of(tag.map));
      for (const key of sortedKeys(value.fields)) {
        parts.push(Buffer.of(entryMarker));
        writeEscaped(Buffer.from(key, 'utf8'), parts);
        writeValue(value.fields.get(key)!, parts);
      }
      parts.push(Buffer.of(endMarker));
      return;
    }
  }
}

/** 0x00 becomes 0x00 0xFF and the end is 0x00 0x01, so "a" < "a\0" < "ab" holds bytewise. */
/**
 * A number as sign, binary exponent and the 64 bits after its leading one: exact for every int64
 * and every double, and equal for equal values (1 and 1.0, 0 and -0.0).
 */
interface NumberParts {
  sign: 'negativeInfinity' | 'negative' | 'zero' | 'positive' | 'positiveInfinity';
  exponent: number;
  fraction: bigint;
}

function bigintParts(value: bigint): NumberParts {
  if (value === 0n) return { sign: 'zero', exponent: 0, fraction: 0n };
  const magnitude = value < 0n ? -value : value;
  const exponent = magnitude.toString(2).length - 1;
  const fraction = ((magnitude - (1n << BigInt(exponent))) << BigInt(64 - exponent)) & 0xffffffffffffffffn;
  return { sign: value < 0n ? 'negative' : 'positive', exponent, fraction };
}

const doubleView = new DataView(new ArrayBuffer(8));

function doubleParts(value: number): NumberParts {
  if (value === 0) return { sign: 'zero', exponent: 0, fraction: 0n };
  if (value === Infinity) return { sign: 'positiveInfinity', exponent: 0, fraction: 0n };
  if (value === -Infinity) return { sign: 'negativeInfinity', exponent: 0, fraction: 0n };
  doubleView.setFloat64(0, Math.abs(value));
  const bits = doubleView.getBigUint64(0);
  const exponentField = Number(bits >> 52n);
  const mantissa = bits & ((1n << 52n) - 1n);
  const sign = value < 0 ? 'negative' : 'positive';
  if (exponentField !== 0) return { sign, exponent: exponentField - 1023, fraction: mantissa << 12n };
  // Subnormal: the leading one is somewhere inside the mantissa.
  const width = mantissa.toString(2).length;
  const fraction = ((mantissa - (1n << BigInt(width - 1))) << BigInt(64 - (width - 1))) & 0xffffffffffffffffn;
  return { sign, exponent: width - 1 - 1074, fraction };
}

function encodeNumber(parts: NumberParts): Buffer {
  if (parts.sign !== 'negative' && parts.sign !== 'positive') return Buffer.of(numberClass[parts.sign]);
  const out = Buffer.alloc(11);
  out[0] = numberClass[parts.sign];
  out.writeUInt16BE(parts.exponent + exponentBias, 1);
  out.writeBigUInt64BE(parts.fraction, 3);
  if (parts.sign === 'negative') {
    // A larger magnitude is a smaller negative number.
    for (let i = 1; i < out.length; i++) out[i] = 255 - out[i]!;
  }
  return out;
}
