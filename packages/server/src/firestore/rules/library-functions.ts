import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { arity, badArgument, functionNotFound, numberArg, timeNamespaceCall } from './library-time.js';
import { checkInt, fault, formatFloat, RulesPath, typeName, type RulesValue } from './values.js';

/** Global conversions (`int() float() string() path()`) and the math and hashing namespaces. */

export const namespaces = new Set(['math', 'hashing', 'timestamp', 'duration', 'latlng']);
/** No `bool()`: the emulator answers "Function not found error: Name: [bool]." */
export const builtinFunctions = new Set(['int', 'float', 'string', 'path', 'debug', 'get', 'exists', 'getAfter', 'existsAfter']);

function conversionError(value: RulesValue, to: string): never {
  throw fault(`Type conversion error. Argument: [${String(value)}], From type: [${typeName(value)}], To type: [${to}].`);
}

export function callConversion(name: string, args: RulesValue[], debugHook?: (value: RulesValue) => void): RulesValue {
  arity(name, args, 1);
  const value = args[0]!;
  switch (name) {
    case 'int':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number') {
        if (!Number.isFinite(value)) conversionError(value, 'int');
        return checkInt(BigInt(Math.trunc(value)));
      }
      if (typeof value === 'string') {
        if (!/^[+-]?[0-9]+$/.test(value)) conversionError(value, 'int');
        return checkInt(BigInt(value));
      }
      return badArgument('int', value);
    case 'float':
      if (typeof value === 'number') return value;
      if (typeof value === 'bigint') return Number(value);
      if (typeof value === 'string') {
        if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$|^[+-]?(?:Infinity|NaN)$/.test(value)) conversionError(value, 'float');
        return Number(value);
      }
      return badArgument('float', value);
    case 'string':
      if (typeof value === 'string') return value;
      if (value === null) return 'null';
      if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
      if (typeof value === 'number') return formatFloat(value);
      if (value instanceof RulesPath) return value.toString();
      throw fault(`Unsupported operation error. Received: string(${typeName(value)}). Expected: string(int), string(float), string(null), string(string), string(bool), string(path).`);
    case 'path':
      if (typeof value !== 'string') return badArgument('path', value);
      return new RulesPath(value.split('/').filter((segment) => segment !== ''));
    case 'debug':
      debugHook?.(value);
      return value;
  }
  return functionNotFound(name);
}

export function callNamespace(namespace: string, name: string, args: RulesValue[]): RulesValue {
  if (namespace === 'math') return mathCall(name, args);
  if (namespace === 'hashing') return hashingCall(name, args);
  return timeNamespaceCall(namespace, name, args);
}

function mathCall(name: string, args: RulesValue[]): RulesValue {
  const fn = `math.${name}`;
  if (name === 'pow') {
    arity(fn, args, 2);
    return Math.pow(numberArg(fn, args[0]!), numberArg(fn, args[1]!));
  }
  arity(fn, args, 1);
  const value = args[0]!;
  switch (name) {
    case 'abs':
      if (typeof value === 'bigint') return checkInt(value < 0n ? -value : value);
      return Math.abs(numberArg(fn, value));
    // The emulator answers floats for ceil, floor and round (`math.floor(1.5) is int` is false),
    // and rounds halves up as Java's Math.round does (`math.round(-2.5)` is -2).
    case 'ceil':
      return Math.ceil(numberArg(fn, value));
    case 'floor':
      return Math.floor(numberArg(fn, value));
    case 'round':
      return Math.floor(numberArg(fn, value) + 0.5);
    case 'sqrt':
      return Math.sqrt(numberArg(fn, value));
    case 'isInfinite':
      return !Number.isNaN(numberArg(fn, value)) && !Number.isFinite(numberArg(fn, value));
    case 'isNaN':
      return Number.isNaN(numberArg(fn, value));
  }
  return functionNotFound(fn);
}

function hashingCall(name: string, args: RulesValue[]): RulesValue {
  const fn = `hashing.${name}`;
  arity(fn, args, 1);
  const value = args[0]!;
  const input = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.isBuffer(value) ? value : badArgument(fn, value);
  switch (name) {
    case 'md5':
    case 'sha256':
      return createHash(name).update(input).digest();
    case 'crc32':
      return uint32Bytes(crc32(input));
    case 'crc32c':
      return uint32Bytes(crc32c(input));
  }
  return functionNotFound(fn);
}

/** Little-endian, as the emulator answers (`hashing.crc32('a').toHexString()` is '43BEB7E8'). */
function uint32Bytes(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
}

let crc32cTable: Uint32Array | undefined;

/** CRC-32C (Castagnoli), which node:zlib does not offer. */
function crc32c(input: Buffer): number {
  if (!crc32cTable) {
    crc32cTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
      crc32cTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of input) crc = crc32cTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
