import { arity, badArgument, durationMethod, functionNotFound, integerArg, latLngMethod, timestampMethod } from './library-time.js';
import { fullMatch, replaceAll, split } from './regex.js';
import { symbolicMethod } from './symbolic.js';
import {
  Constrained,
  fault,
  formatFloat,
  isList,
  RulesDuration,
  RulesLatLng,
  RulesMap,
  RulesMapDiff,
  RulesPath,
  RulesSet,
  RulesTimestamp,
  strictEquals,
  typeName,
  type RulesValue,
} from './values.js';

/** `value.name(args)`: the methods of rules.String, List, Map, MapDiff, Set, Bytes, Path, Timestamp, Duration and LatLng. */
export function callMethod(value: RulesValue, name: string, args: RulesValue[]): RulesValue {
  if (value === null) throw fault('Null value error.');
  if (typeof value === 'string') return stringMethod(value, name, args);
  if (isList(value)) return listMethod(value, name, args);
  if (value instanceof RulesMap) return mapMethod(value, name, args);
  if (value instanceof RulesSet) return setMethod(value, name, args);
  if (value instanceof RulesMapDiff) return mapDiffMethod(value, name, args);
  if (Buffer.isBuffer(value)) return bytesMethod(value, name, args);
  if (value instanceof RulesPath) return pathMethod(value, name, args);
  if (value instanceof RulesTimestamp) return timestampMethod(value, name, args);
  if (value instanceof RulesDuration) return durationMethod(value, name, args);
  if (value instanceof RulesLatLng) return latLngMethod(value, name, args);
  if (value instanceof Constrained) return symbolicMethod(value, name, args);
  return functionNotFound(name);
}

function stringArg(fn: string, value: RulesValue | undefined): string {
  if (typeof value !== 'string') throw badArgument(fn, value ?? null);
  return value;
}

function stringMethod(value: string, name: string, args: RulesValue[]): RulesValue {
  switch (name) {
    case 'size':
      arity('string.size', args, 0);
      return BigInt(countCodePoints(value));
    // ASCII letters only, as the emulator does ("ÄB".lower() is "Äb").
    case 'lower':
      arity('string.lower', args, 0);
      return value.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
    case 'upper':
      arity('string.upper', args, 0);
      return value.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
    case 'trim':
      arity('string.trim', args, 0);
      return value.trim();
    case 'toUtf8':
      arity('string.toUtf8', args, 0);
      return Buffer.from(value, 'utf8');
    case 'matches':
      arity('string.matches', args, 1);
      return fullMatch(value, stringArg('string.matches', args[0]));
    case 'replace':
      arity('string.replace', args, 2);
      return replaceAll(value, stringArg('string.replace', args[0]), stringArg('string.replace', args[1]));
    case 'split':
      arity('string.split', args, 1);
      return split(value, stringArg('string.split', args[0]));
  }
  return functionNotFound(name);
}

export function countCodePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) i++;
    count++;
  }
  return count;
}

/** Lists and sets are interchangeable as the argument of hasAll, hasAny, hasOnly, removeAll, ... */
function itemsOf(fn: string, value: RulesValue | undefined): readonly RulesValue[] {
  if (isList(value!)) return value as readonly RulesValue[];
  if (value instanceof RulesSet) return value.items;
  throw badArgument(fn, value ?? null);
}

const contains = (items: readonly RulesValue[], value: RulesValue) => items.some((item) => strictEquals(item, value));

function listMethod(value: readonly RulesValue[], name: string, args: RulesValue[]): RulesValue {
  const fn = `list.${name}`;
  switch (name) {
    case 'size':
      arity(fn, args, 0);
      return BigInt(value.length);
    case 'concat':
      arity(fn, args, 1);
      return [...value, ...itemsOf(fn, args[0])];
    case 'hasAll':
      arity(fn, args, 1);
      return itemsOf(fn, args[0]).every((item) => contains(value, item));
    case 'hasAny':
      arity(fn, args, 1);
      return itemsOf(fn, args[0]).some((item) => contains(value, item));
    case 'hasOnly': {
      arity(fn, args, 1);
      const allowed = itemsOf(fn, args[0]);
      return value.every((item) => contains(allowed, item));
    }
    case 'removeAll': {
      arity(fn, args, 1);
      const removed = itemsOf(fn, args[0]);
      return value.filter((item) => !contains(removed, item));
    }
    case 'toSet':
      arity(fn, args, 0);
      return RulesSet.of(value);
    case 'join': {
      if (args.length !== 1) throw fault(`Incorrect number of arguments. Received: ${args.length}. Expected: list.join(string).`);
      const separator = stringArg(fn, args[0]);
      return value.map((item) => joinText(item)).join(separator);
    }
  }
  return functionNotFound(name);
}

function joinText(item: RulesValue): string {
  if (typeof item === 'string') return item;
  if (typeof item === 'bigint' || typeof item === 'boolean') return String(item);
  if (typeof item === 'number') return formatFloat(item);
  if (item === null) return 'null';
  throw fault(`Unsupported operation error. Received: list.join of ${typeName(item)}.`);
}

function mapMethod(value: RulesMap, name: string, args: RulesValue[]): RulesValue {
  const fn = `map.${name}`;
  switch (name) {
    case 'size':
      arity(fn, args, 0);
      return BigInt(value.size);
    case 'keys':
      arity(fn, args, 0);
      return value.keys();
    case 'values':
      arity(fn, args, 0);
      return value.keys().map((key) => value.get(key)!);
    case 'get': {
      arity(fn, args, 2);
      const key = args[0]!;
      const keys = typeof key === 'string' ? [key] : isList(key) ? key : badArgument(fn, key);
      let current: RulesValue = value;
      for (const segment of keys) {
        if (typeof segment !== 'string') throw badArgument(fn, segment);
        const next: RulesValue | undefined = current instanceof RulesMap ? current.get(segment) : undefined;
        if (next === undefined) return args[1]!;
        current = next;
      }
      return current;
    }
    case 'diff': {
      arity(fn, args, 1);
      const other = args[0];
      if (!(other instanceof RulesMap)) throw badArgument(fn, other ?? null);
      // a.diff(b): what changed from b (the map passed) to a (the map called on); addedKeys() are
      // a's keys that b lacks, as Google documents and its emulator answers.
      return new RulesMapDiff(other, value);
    }
  }
  return functionNotFound(name);
}

function mapDiffMethod(diff: RulesMapDiff, name: string, args: RulesValue[]): RulesValue {
  arity(`map_diff.${name}`, args, 0);
  const { before, after } = diff;
  const changed = (key: string) => !strictEquals(before.get(key)!, after.get(key)!);
  switch (name) {
    case 'addedKeys':
      return new RulesSet(after.keys().filter((key) => !before.has(key)));
    case 'removedKeys':
      return new RulesSet(before.keys().filter((key) => !after.has(key)));
    case 'changedKeys':
      return new RulesSet(before.keys().filter((key) => after.has(key) && changed(key)));
    case 'unchangedKeys':
      return new RulesSet(before.keys().filter((key) => after.has(key) && !changed(key)));
    case 'affectedKeys':
      return new RulesSet([...before.keys().filter((key) => !after.has(key) || changed(key)), ...after.keys().filter((key) => !before.has(key))]);
  }
  return functionNotFound(name);
}

function setMethod(value: RulesSet, name: string, args: RulesValue[]): RulesValue {
  const fn = `set.${name}`;
  const items = value.items;
  switch (name) {
    case 'size':
      arity(fn, args, 0);
      return BigInt(items.length);
    case 'hasAll':
      arity(fn, args, 1);
      return itemsOf(fn, args[0]).every((item) => value.has(item));
    case 'hasAny':
      arity(fn, args, 1);
      return itemsOf(fn, args[0]).some((item) => value.has(item));
    case 'hasOnly': {
      arity(fn, args, 1);
      const allowed = itemsOf(fn, args[0]);
      return items.every((item) => contains(allowed, item));
    }
    case 'difference': {
      arity(fn, args, 1);
      const other = itemsOf(fn, args[0]);
      return new RulesSet(items.filter((item) => !contains(other, item)));
    }
    case 'intersection': {
      arity(fn, args, 1);
      const other = itemsOf(fn, args[0]);
      return new RulesSet(items.filter((item) => contains(other, item)));
    }
    case 'union':
      arity(fn, args, 1);
      return RulesSet.of([...items, ...itemsOf(fn, args[0])]);
  }
  return functionNotFound(name);
}

function bytesMethod(value: Buffer, name: string, args: RulesValue[]): RulesValue {
  arity(`bytes.${name}`, args, 0);
  if (name === 'size') return BigInt(value.length);
  if (name === 'toBase64') return value.toString('base64');
  if (name === 'toHexString') return value.toString('hex').toUpperCase();
  return functionNotFound(name);
}

function pathMethod(value: RulesPath, name: string, args: RulesValue[]): RulesValue {
  if (name === 'bind') {
    arity('path.bind', args, 1);
    const bindings = args[0];
    if (!(bindings instanceof RulesMap)) throw badArgument('path.bind', bindings ?? null);
    return new RulesPath(
      value.segments.map((segment) => {
        const variable = /^\$\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(segment)?.[1];
        if (variable === undefined) return segment;
        const bound = bindings.get(variable);
        if (typeof bound !== 'string') throw fault(`Path variable ${variable} is not bound to a string.`);
        return bound;
      }),
    );
  }
  return functionNotFound(name);
}

/** `x[i]` on a list, string or path (a map's index is its key, handled by the evaluator). */
export function indexValue(value: RulesValue, index: RulesValue): RulesValue {
  if (value instanceof RulesMap) {
    if (typeof index !== 'string') throw fault(`Unsupported operation error. Received: map[${typeName(index)}]. Expected: map[string].`);
    return value.field(index);
  }
  const items = isList(value) ? value : typeof value === 'string' ? [...value] : value instanceof RulesPath ? value.segments : undefined;
  if (items === undefined || typeof index !== 'bigint') {
    if (value === null) throw fault('Null value error.');
    throw fault(`Unsupported operation error. Received: ${typeName(value)}[${typeName(index)}]. Expected: list[int], string[int], path[int], map[string].`);
  }
  if (index < 0n || index >= BigInt(items.length)) throw fault(`Index out of bound error. Index: [${index}] , size: [${items.length}].`);
  return items[Number(index)]!;
}

/** `x[i:j]` on a list or string; either bound may be left out. */
export function sliceValue(value: RulesValue, start: RulesValue | undefined, end: RulesValue | undefined): RulesValue {
  const items = isList(value) ? value : typeof value === 'string' ? [...value] : undefined;
  if (items === undefined) {
    if (value === null) throw fault('Null value error.');
    throw fault(`Unsupported operation error. Received: ${typeName(value)}[:]. Expected: list[int:int], string[int:int].`);
  }
  const from = start === undefined ? 0n : integerArg('slice', start);
  const to = end === undefined ? BigInt(items.length) : integerArg('slice', end);
  if (from < 0n || to > BigInt(items.length) || from > to) throw fault(`Index out of bound error. Index: [${from}:${to}] , size: [${items.length}].`);
  const slice = items.slice(Number(from), Number(to));
  return typeof value === 'string' ? (slice as string[]).join('') : slice;
}
