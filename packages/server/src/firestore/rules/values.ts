/**
 * Values as rules see them. Natives where JavaScript has one (null, boolean, bigint for int,
 * number for float, string, Buffer for bytes, arrays for lists), classes for the rest, so that
 * evaluating allocates little. Errors are thrown as RulesFault (not Error: no stack is captured)
 * and carry the emulator's message.
 */

export type RulesValue =
  | null
  | boolean
  | bigint
  | number
  | string
  | Buffer
  | readonly RulesValue[]
  | RulesMap
  | RulesSet
  | RulesPath
  | RulesTimestamp
  | RulesDuration
  | RulesLatLng
  | RulesMapDiff
  | Unknown
  | Constrained;

/** An evaluation error; `&&`, `||` and the allow statement decide what it means. */
export class RulesFault {
  constructor(readonly message: string) {}
}

export const fault = (message: string): RulesFault => new RulesFault(message);
export const nullValueError = () => fault('Null value error.');
export const propertyUndefined = (name: string) => fault(`Property ${name} is undefined on object.`);

/** A map: either built by rules (entries) or a document's fields converted on first read. */
export class RulesMap {
  constructor(protected readonly entries: Map<string, RulesValue>) {}
  get(key: string): RulesValue | undefined {
    return this.entries.get(key);
  }
  /** Reading a missing key is an error in rules (`Property x is undefined on object.`). */
  field(key: string): RulesValue {
    const value = this.get(key);
    if (value === undefined) throw propertyUndefined(key);
    return value;
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
  /** Sorted, as the emulator lists them (`{'z': 1, 'a': 2}.keys() == ['a', 'z']`). */
  keys(): string[] {
    return [...this.entries.keys()].sort();
  }
  get size(): number {
    return this.entries.size;
  }
}

/** A map whose values are computed on first read (documents, `request`, `resource`). */
export class LazyMap extends RulesMap {
  constructor(
    private readonly keyList: readonly string[],
    private readonly compute: (key: string) => RulesValue | undefined,
  ) {
    super(new Map());
  }
  override get(key: string): RulesValue | undefined {
    let value = this.entries.get(key);
    if (value === undefined && !this.entries.has(key)) {
      value = this.keyList.includes(key) ? this.compute(key) : undefined;
      this.entries.set(key, value as RulesValue);
    }
    return value;
  }
  override keys(): string[] {
    return this.keyList.filter((key) => this.get(key) !== undefined).sort();
  }
  override get size(): number {
    return this.keys().length;
  }
}

export class RulesSet {
  constructor(readonly items: readonly RulesValue[]) {}
  static of(values: readonly RulesValue[]): RulesSet {
    const items: RulesValue[] = [];
    for (const value of values) if (!items.some((item) => strictEquals(item, value))) items.push(value);
    return new RulesSet(items);
  }
  has(value: RulesValue): boolean {
    return this.items.some((item) => strictEquals(item, value));
  }
}

export class RulesPath {
  constructor(readonly segments: readonly string[]) {}
  toString(): string {
    return '/' + this.segments.join('/');
  }
}

/** Nanoseconds since the epoch. */
export class RulesTimestamp {
  constructor(readonly nanos: bigint) {}
}

export class RulesDuration {
  constructor(readonly nanos: bigint) {}
}

export class RulesLatLng {
  constructor(
    readonly latitude: number,
    readonly longitude: number,
  ) {}
}

export class RulesMapDiff {
  constructor(
    readonly before: RulesMap,
    readonly after: RulesMap,
  ) {}
}

/**
 * A value a list query leaves open (the document id, a `**` over unknown segments). Reading it
 * is what the emulator reports as a null value error.
 */
export class Unknown {
  constructor(readonly what: string) {}
}

/**
 * A field of a list query's symbolic document: what the query's filters say about it. `==` and
 * `in` filters become concrete values instead; this holds ranges, `!=`/`not-in` and
 * `array-contains`, so that `resource.data.n < 100` is true when the query asks for `n < 50`.
 */
export class Constrained {
  lower?: { value: RulesValue; inclusive: boolean };
  upper?: { value: RulesValue; inclusive: boolean };
  excluded: RulesValue[] = [];
  contained: RulesValue[] = [];
  constructor(readonly name: string) {}
}

export const int64Max = (1n << 63n) - 1n;
export const int64Min = -(1n << 63n);

export function checkInt(value: bigint): bigint {
  if (value > int64Max || value < int64Min) throw fault('Integer value is out of the [-9223372036854775808, 9223372036854775807] range.');
  return value;
}

export function isList(value: RulesValue): value is readonly RulesValue[] {
  return Array.isArray(value);
}

/** The type names of the emulator's messages (`Received: string + int`). */
export function typeName(value: RulesValue): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
  }
  if (Buffer.isBuffer(value)) return 'bytes';
  if (Array.isArray(value)) return 'list';
  if (value instanceof RulesMap) return 'map';
  if (value instanceof RulesSet) return 'set';
  if (value instanceof RulesPath) return 'path';
  if (value instanceof RulesTimestamp) return 'timestamp';
  if (value instanceof RulesDuration) return 'duration';
  if (value instanceof RulesLatLng) return 'latlng';
  if (value instanceof RulesMapDiff) return 'map_diff';
  return 'constraint';
}

/** Reading an unknown (list query) value is an error wherever it is used. */
export function known(value: RulesValue): RulesValue {
  if (value instanceof Unknown) throw nullValueError();
  return value;
}

/**
 * `==` as the emulator answers it: int and float compare by value at the top (`1 == 1.0`),
 * but elements of lists, sets and maps compare with their type (`[1] == [1.0]` is false).
 */
export function rulesEquals(left: RulesValue, right: RulesValue): boolean {
  if (typeof left === 'bigint' && typeof right === 'number') return Number(left) === right && BigInt(Math.trunc(right)) === left;
  if (typeof left === 'number' && typeof right === 'bigint') return rulesEquals(right, left);
  return strictEquals(left, right);
}

export function strictEquals(left: RulesValue, right: RulesValue): boolean {
  if (left === right) return typeof left !== 'number' || !Number.isNaN(left);
  if (left === null || right === null || typeof left !== 'object' || typeof right !== 'object') return false;
  if (Buffer.isBuffer(left)) return Buffer.isBuffer(right) && left.equals(right);
  if (Array.isArray(left)) {
    const other = right as readonly RulesValue[];
    return Array.isArray(other) && left.length === other.length && left.every((item: RulesValue, i: number) => strictEquals(item, other[i]!));
  }
  if (left instanceof RulesMap) {
    if (!(right instanceof RulesMap)) return false;
    const keys = left.keys();
    return keys.length === right.size && keys.every((key) => right.has(key) && strictEquals(left.get(key)!, right.get(key)!));
  }
  if (left instanceof RulesSet) return right instanceof RulesSet && left.items.length === right.items.length && left.items.every((item) => right.has(item));
  if (left instanceof RulesPath) return right instanceof RulesPath && left.segments.length === right.segments.length && left.segments.every((s, i) => s === right.segments[i]);
  if (left instanceof RulesTimestamp) return right instanceof RulesTimestamp && left.nanos === right.nanos;
  if (left instanceof RulesDuration) return right instanceof RulesDuration && left.nanos === right.nanos;
  if (left instanceof RulesLatLng) return right instanceof RulesLatLng && left.latitude === right.latitude && left.longitude === right.longitude;
  return false;
}

/** Order for `< <= > >=`: numbers (int and float together), strings, bytes, timestamps, durations. */
export function compareOrdered(left: RulesValue, right: RulesValue, op: string): number {
  const numbers = (typeof left === 'bigint' || typeof left === 'number') && (typeof right === 'bigint' || typeof right === 'number');
  if (numbers) {
    if (typeof left === 'bigint' && typeof right === 'bigint') return left < right ? -1 : left > right ? 1 : 0;
    const a = Number(left);
    const b = Number(right);
    if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  if (Buffer.isBuffer(left) && Buffer.isBuffer(right)) return Buffer.compare(left, right);
  if ((left instanceof RulesTimestamp && right instanceof RulesTimestamp) || (left instanceof RulesDuration && right instanceof RulesDuration)) {
    return left.nanos < right.nanos ? -1 : left.nanos > right.nanos ? 1 : 0;
  }
  const expected = ['string', 'bytes', 'int', 'float', 'duration', 'timestamp'].map((t) => `${t} ${op} ${t}`);
  throw fault(`Unsupported operation error. Received: ${typeName(left)} ${op} ${typeName(right)}. Expected: ${expected.join(', ')}, constraint ${op} any, any ${op} constraint.`);
}

/** Java's Double.toString, which the emulator's `string(float)` prints (`1.0`, `1.0E8`). */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    const text = String(value);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

/** Readable text of a value, for debug() and logs. */
export function describeValue(value: RulesValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return formatFloat(value);
  if (typeof value !== 'object') return String(value);
  if (Buffer.isBuffer(value)) return `b'${value.toString('hex')}'`;
  if (Array.isArray(value)) return `[${value.map(describeValue).join(', ')}]`;
  if (value instanceof RulesMap) return `{${value.keys().map((key) => `${JSON.stringify(key)}: ${describeValue(value.get(key)!)}`).join(', ')}}`;
  if (value instanceof RulesSet) return `set(${value.items.map(describeValue).join(', ')})`;
  if (value instanceof RulesPath) return value.toString();
  if (value instanceof RulesTimestamp) return `timestamp(${new Date(Number(value.nanos / 1_000_000n)).toISOString()})`;
  if (value instanceof RulesDuration) return `duration(${value.nanos}ns)`;
  if (value instanceof RulesLatLng) return `latlng(${value.latitude}, ${value.longitude})`;
  return typeName(value);
}
