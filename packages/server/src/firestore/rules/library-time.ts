import { fault, RulesDuration, RulesLatLng, RulesTimestamp, typeName, type RulesValue } from './values.js';

/** rules.Timestamp, rules.Duration, rules.LatLng and the timestamp/duration/latlng namespaces. All times are UTC. */

const nanosPerSecond = 1_000_000_000n;
const nanosPerDay = 86_400n * nanosPerSecond;
const unitNanos: Record<string, bigint> = {
  w: 7n * nanosPerDay,
  d: nanosPerDay,
  h: 3600n * nanosPerSecond,
  m: 60n * nanosPerSecond,
  s: nanosPerSecond,
  ms: 1_000_000n,
  ns: 1n,
};
/** Firestore's timestamp range: 0001-01-01 to 9999-12-31. */
const minTimestamp = -62_135_596_800n * nanosPerSecond;
const maxTimestamp = 253_402_300_800n * nanosPerSecond - 1n;

export function timestamp(nanos: bigint): RulesTimestamp {
  if (nanos < minTimestamp || nanos > maxTimestamp) throw fault('Timestamp value is out of range.');
  return new RulesTimestamp(nanos);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && a < 0n) ? q - 1n : q;
}

function utcDate(value: RulesTimestamp): Date {
  return new Date(Number(floorDiv(value.nanos, 1_000_000n)));
}

export function timestampMethod(value: RulesTimestamp, name: string, args: RulesValue[]): RulesValue {
  const date = utcDate(value);
  const nanosOfDay = value.nanos - floorDiv(value.nanos, nanosPerDay) * nanosPerDay;
  arity(`timestamp.${name}`, args, 0);
  switch (name) {
    case 'date':
      return new RulesTimestamp(value.nanos - nanosOfDay);
    case 'time':
      return new RulesDuration(nanosOfDay);
    case 'year':
      return BigInt(date.getUTCFullYear());
    case 'month':
      return BigInt(date.getUTCMonth() + 1);
    case 'day':
      return BigInt(date.getUTCDate());
    case 'hours':
      return BigInt(date.getUTCHours());
    case 'minutes':
      return BigInt(date.getUTCMinutes());
    case 'seconds':
      return BigInt(date.getUTCSeconds());
    case 'nanos':
      return value.nanos - floorDiv(value.nanos, nanosPerSecond) * nanosPerSecond;
    case 'dayOfWeek':
      // Monday is 1 and Sunday 7 (the emulator: 2020-01-02, a Thursday, is 4).
      return BigInt(date.getUTCDay() || 7);
    case 'dayOfYear':
      return BigInt(Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1);
    case 'toMillis':
      return floorDiv(value.nanos, 1_000_000n);
  }
  throw functionNotFound(name);
}

export function durationMethod(value: RulesDuration, name: string, args: RulesValue[]): RulesValue {
  arity(`duration.${name}`, args, 0);
  if (name === 'seconds') return value.nanos / nanosPerSecond;
  if (name === 'nanos') return value.nanos % nanosPerSecond;
  throw functionNotFound(name);
}

export function latLngMethod(value: RulesLatLng, name: string, args: RulesValue[]): RulesValue {
  if (name === 'latitude' || name === 'longitude') {
    arity(`latlng.${name}`, args, 0);
    return value[name];
  }
  if (name === 'distance') {
    arity('latlng.distance', args, 1);
    const other = args[0];
    if (!(other instanceof RulesLatLng)) throw badArgument('latlng.distance', other ?? null);
    return haversineMeters(value, other);
  }
  throw functionNotFound(name);
}

const earthRadiusMeters = 6_371_000;

function haversineMeters(a: RulesLatLng, b: RulesLatLng): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLng = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * earthRadiusMeters * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** `timestamp.date(y, m, d)`, `timestamp.value(ms)`, `duration.value(n, unit)`, `duration.time(h, m, s, ns)`, `duration.abs(d)`, `latlng.value(lat, lng)`. */
export function timeNamespaceCall(namespace: string, name: string, args: RulesValue[]): RulesValue {
  const qualified = `${namespace}.${name}`;
  switch (qualified) {
    case 'timestamp.date': {
      arity(qualified, args, 3);
      const [year, month, day] = args.map((arg) => integerArg(qualified, arg));
      const millis = Date.UTC(Number(year), Number(month) - 1, Number(day));
      const check = new Date(millis);
      if (Number.isNaN(millis) || check.getUTCDate() !== Number(day) || check.getUTCMonth() !== Number(month) - 1) throw fault(`Invalid date: ${year}-${month}-${day}.`);
      return timestamp(BigInt(millis) * 1_000_000n);
    }
    case 'timestamp.value':
      arity(qualified, args, 1);
      return timestamp(integerArg(qualified, args[0]!) * 1_000_000n);
    case 'duration.value': {
      arity(qualified, args, 2);
      const unit = args[1];
      if (typeof unit !== 'string' || !(unit in unitNanos)) throw fault(`Invalid duration unit: ${String(unit)}. Expected one of w, d, h, m, s, ms, ns.`);
      return new RulesDuration(integerArg(qualified, args[0]!) * unitNanos[unit]!);
    }
    case 'duration.time': {
      arity(qualified, args, 4);
      const [hours, minutes, seconds, nanos] = args.map((arg) => integerArg(qualified, arg));
      return new RulesDuration(((hours! * 60n + minutes!) * 60n + seconds!) * nanosPerSecond + nanos!);
    }
    case 'duration.abs': {
      arity(qualified, args, 1);
      const duration = args[0];
      if (!(duration instanceof RulesDuration)) throw badArgument(qualified, duration ?? null);
      return duration.nanos < 0n ? new RulesDuration(-duration.nanos) : duration;
    }
    case 'latlng.value': {
      arity(qualified, args, 2);
      const [latitude, longitude] = args.map((arg) => numberArg(qualified, arg));
      if (!(Math.abs(latitude!) <= 90 && Math.abs(longitude!) <= 180)) {
        throw fault(`Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: ${javaDouble(latitude!)}, longitude: ${javaDouble(longitude!)}.`);
      }
      return new RulesLatLng(latitude!, longitude!);
    }
  }
  throw functionNotFound(qualified);
}

function javaDouble(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}

export function integerArg(fn: string, value: RulesValue): bigint {
  if (typeof value !== 'bigint') throw badArgument(fn, value);
  return value;
}

export function numberArg(fn: string, value: RulesValue): number {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value !== 'number') throw badArgument(fn, value);
  return value;
}

export function arity(fn: string, args: RulesValue[], expected: number): void {
  if (args.length !== expected) throw fault(`Incorrect number of arguments. Received: ${args.length}. Expected: ${fn} with ${expected}.`);
}

export function badArgument(fn: string, value: RulesValue): never {
  throw fault(`Unsupported operation error. Received: ${fn}(${typeName(value)}).`);
}

export function functionNotFound(name: string): never {
  throw fault(`Function not found error: Name: [${name}].`);
}
