/**
 * The index stores values in an order-preserving binary form: its byte order must be exactly the
 * comparator's order (which the differential test checks against Google's emulator). Random and
 * hand-picked edge values, every pair compared both ways.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { complement, encodeValue } from '../../packages/server/src/firestore/core/index-encoding.js';
import { compareValues, type Value } from '../../packages/server/src/firestore/core/values.js';

const int = (n: bigint | number): Value => ({ type: 'integer', value: BigInt(n) });
const dbl = (n: number): Value => ({ type: 'double', value: n });
const str = (s: string): Value => ({ type: 'string', value: s });
const ref = (p: string): Value => ({ type: 'reference', value: `projects/p/databases/(default)/documents/${p}` });

const edges: Value[] = [
  { type: 'null' },
  { type: 'boolean', value: false },
  { type: 'boolean', value: true },
  dbl(NaN),
  dbl(-Infinity),
  dbl(-1e300),
  int(-(1n << 63n)),
  int(-1),
  dbl(-0.5),
  dbl(-Number.MIN_VALUE),
  dbl(-0),
  int(0),
  dbl(Number.MIN_VALUE),
  dbl(5e-324 * 3),
  dbl(0.5),
  int(1),
  dbl(1),
  dbl(1.5),
  dbl(2 ** 53),
  int(2n ** 53n + 1n),
  int((1n << 63n) - 1n),
  dbl(2 ** 63),
  dbl(1e300),
  dbl(Infinity),
  { type: 'timestamp', seconds: -62135596800, nanos: 0 },
  { type: 'timestamp', seconds: 0, nanos: 1000 },
  { type: 'timestamp', seconds: 1, nanos: 0 },
  str(''),
  str('\u0000'),
  str('a'),
  str('a\u0000'),
  str('aa'),
  str('b'),
  str('\uffff'),
  str('😀'),
  { type: 'bytes', value: Buffer.of() },
  { type: 'bytes', value: Buffer.of(0) },
  { type: 'bytes', value: Buffer.of(1) },
  { type: 'bytes', value: Buffer.of(1, 2) },
  // Numeric ids (`__id<int64>__`) sort first, by number; then string ids by UTF-8 bytes, NUL first.
  ref('c/__id-9223372036854775808__'),
  ref('c/__id-2__'),
  ref('c/__id7__'),
  ref('c/__id7__/x/__id1__'),
  ref('c/__id7__/x/a'),
  ref('c/__id10__'),
  ref('c/__id9223372036854775807__'),
  ref('c/\u0000'),
  ref('c/__id7__x'),
  ref('c/a'),
  ref('c/a/x/y'),
  ref('c/b'),
  ref('c0/a'),
  { type: 'geo', latitude: -10, longitude: 5 },
  { type: 'geo', latitude: 0, longitude: 0 },
  { type: 'geo', latitude: 0, longitude: 1 },
  { type: 'array', values: [] },
  { type: 'array', values: [{ type: 'null' }] },
  { type: 'array', values: [dbl(NaN)] },
  { type: 'array', values: [int(1)] },
  { type: 'array', values: [int(1), int(2)] },
  { type: 'array', values: [int(2)] },
  { type: 'array', values: [str('a')] },
  vector([1, 2]),
  vector([0, 0, 0]),
  { type: 'map', fields: new Map() },
  { type: 'map', fields: new Map([['a', int(1)]]) },
  { type: 'map', fields: new Map([['a', int(1)], ['b', int(0)]]) },
  { type: 'map', fields: new Map([['b', int(0)]]) },
];

function vector(values: number[]): Value {
  return { type: 'map', fields: new Map<string, Value>([['__type__', str('__vector__')], ['value', { type: 'array', values: values.map(dbl) }]]) };
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function randomValue(next: () => number, depth = 0): Value {
  const pick = Math.floor(next() * (depth > 2 ? 8 : 10));
  switch (pick) {
    case 0:
      return int(BigInt(Math.floor((next() - 0.5) * 2 ** 40)) * BigInt(Math.floor(next() * 2 ** 20)));
    case 1:
      return dbl((next() - 0.5) * 10 ** Math.floor(next() * 40 - 20));
    case 2:
      return int(Math.floor((next() - 0.5) * 20));
    case 3:
      return dbl(Math.floor((next() - 0.5) * 20) / 2);
    case 4:
      return str(String.fromCodePoint(...Array.from({ length: Math.floor(next() * 4) }, () => [0, 0x61, 0x62, 0xffff, 0x1f600, 0xe000][Math.floor(next() * 6)]!)));
    case 5:
      return { type: 'timestamp', seconds: Math.floor((next() - 0.5) * 2e9), nanos: Math.floor(next() * 1000) * 1000 };
    case 6:
      return { type: 'bytes', value: Buffer.from(Array.from({ length: Math.floor(next() * 3) }, () => Math.floor(next() * 3))) };
    case 7:
      return ref(Array.from({ length: 2 * (1 + Math.floor(next() * 2)) }, () => ['a', 'b', 'a\u0000', '\u0000', '__id7__', '__id-3__', '__id10__'][Math.floor(next() * 7)]).join('/'));
    case 8:
      return { type: 'array', values: Array.from({ length: Math.floor(next() * 3) }, () => randomValue(next, depth + 1)).filter((v) => v.type !== 'array') };
    default:
      return { type: 'map', fields: new Map(Array.from({ length: Math.floor(next() * 3) }, () => [['a', 'b', 'ab'][Math.floor(next() * 3)]!, randomValue(next, depth + 1)] as const)) };
  }
}

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

function checkPairs(values: Value[]): void {
  const encoded = values.map(encodeValue);
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < values.length; j++) {
      const expected = sign(compareValues(values[i]!, values[j]!));
      assert.equal(sign(Buffer.compare(encoded[i]!, encoded[j]!)), expected, `encoding order of ${i} vs ${j}`);
      assert.equal(sign(Buffer.compare(complement(encoded[i]!), complement(encoded[j]!))), sign(-expected), `descending order of ${i} vs ${j}`);
    }
  }
}

test('the edge values are in the documented order, and the encoding agrees', () => {
  for (let i = 1; i < edges.length; i++) {
    assert.ok(compareValues(edges[i - 1]!, edges[i]!) <= 0, `edge ${i - 1} <= edge ${i}`);
  }
  assert.equal(compareValues(int(1), dbl(1)), 0);
  assert.equal(compareValues(dbl(-0), int(0)), 0);
  assert.ok(compareValues(dbl(2 ** 53), int(2n ** 53n + 1n)) < 0, 'an int64 is never rounded through a double');
  checkPairs(edges);
});

test('random values: byte order of the encoding is the comparator order', () => {
  for (const seed of [1, 2, 3]) {
    const next = random(seed);
    checkPairs(Array.from({ length: 150 }, () => randomValue(next)));
  }
});
