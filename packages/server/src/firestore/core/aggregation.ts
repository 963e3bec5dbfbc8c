import type { Doc } from './documents.js';
import { firestoreErrors } from './errors.js';
import type { DatabaseId } from './paths.js';
import { valueOf, type FieldRef, type Query } from './query.js';
import { parseFieldRef } from './query-parse.js';
import { int64Max, int64Min, nullValue, type Value } from './values.js';
import { onlyKeys } from './wire-checks.js';

/** count / sum / avg over a query's results (research/firestore-semantics.md §2.6). */
export type Aggregation =
  | { alias: string; kind: 'count'; upTo?: number }
  | { alias: string; kind: 'sum' | 'avg'; field: FieldRef };

const maxAggregations = 5;

export function parseAggregations(raw: unknown): Aggregation[] {
  if (!Array.isArray(raw) || raw.length === 0) throw firestoreErrors.invalidArgument('An aggregation query needs at least one aggregation.');
  if (raw.length > maxAggregations) throw firestoreErrors.invalidArgument(`The query exceeds the maximum number of aggregations (${maxAggregations}).`);
  const aggregations = raw.map((item: unknown, i: number): Aggregation => {
    if (typeof item !== 'object' || item === null) throw firestoreErrors.invalidArgument(`Invalid aggregation at index ${i}.`);
    const wire = item as Record<string, unknown>;
    const alias = wire.alias === undefined || wire.alias === '' ? `field_${i + 1}` : wire.alias;
    if (typeof alias !== 'string' || /^__.*__$/.test(alias)) throw firestoreErrors.invalidArgument(`Invalid aggregation alias "${String(alias)}".`);
    onlyKeys(wire, ['alias', 'count', 'sum', 'avg'], `structured_aggregation_query.aggregations[${i}]`);
    if (wire.count !== undefined) {
      const count = (wire.count ?? {}) as { upTo?: unknown };
      const rawUpTo = typeof count.upTo === 'object' && count.upTo !== null ? (count.upTo as { value?: unknown }).value : count.upTo;
      if (rawUpTo === undefined) return { alias, kind: 'count' };
      const upTo = Number(rawUpTo);
      if (!Number.isInteger(upTo) || upTo < 1) throw firestoreErrors.invalidArgument('upTo must be a positive integer.');
      return { alias, kind: 'count', upTo };
    }
    const kind = wire.sum !== undefined ? 'sum' : wire.avg !== undefined ? 'avg' : undefined;
    if (!kind) throw firestoreErrors.invalidArgument(`Aggregation ${alias} must be one of count, sum or avg.`);
    const operator = wire[kind] as { field?: unknown } | null;
    const field = parseFieldRef(operator?.field, `aggregations[${i}].${kind}.field`);
    return { alias, kind, field };
  });
  const aliases = new Set(aggregations.map((aggregation) => aggregation.alias));
  if (aliases.size !== aggregations.length) throw firestoreErrors.invalidArgument('Aggregation aliases must be unique.');
  return aggregations;
}

/**
 * Like an orderBy, a sum or avg over a field limits the whole aggregation query to documents that
 * have the field: `count` beside `sum(n)` counts only documents with an `n`, and the query's offset
 * and limit count among those. So such a query runs without its offset and limit, and `cover`
 * keeps the documents that have the fields and then applies them (run with them, a limit of 2 whose
 * first two matches lack `n` counted 0, where Firestore counts the first two that have it).
 */
export function aggregationPlan(db: DatabaseId, query: Query, aggregations: readonly Aggregation[]): { query: Query; cover(docs: readonly Doc[]): Doc[] } {
  const fields = aggregations.flatMap((aggregation) => (aggregation.kind === 'count' ? [] : [aggregation.field]));
  if (fields.length === 0) return { query, cover: (docs) => [...docs] };
  const having = (docs: readonly Doc[]) => docs.filter((doc) => fields.every((field) => valueOf(db, doc, field) !== undefined));
  if (query.offset === 0 && query.limit === undefined) return { query, cover: having };
  const { limit, ...unlimited } = query;
  return {
    query: { ...unlimited, offset: 0 },
    cover: (docs) => having(docs).slice(query.offset, limit === undefined ? undefined : query.offset + limit),
  };
}

/** The aggregations over the documents an aggregation query covers (`aggregationPlan`'s `cover`). */
export function aggregate(db: DatabaseId, aggregations: readonly Aggregation[], docs: readonly Doc[]): Map<string, Value> {
  const results = new Map<string, Value>();
  for (const aggregation of aggregations) {
    if (aggregation.kind === 'count') {
      const count = aggregation.upTo === undefined ? docs.length : Math.min(docs.length, aggregation.upTo);
      results.set(aggregation.alias, { type: 'integer', value: BigInt(count) });
      continue;
    }
    const numbers = docs.map((doc) => valueOf(db, doc, aggregation.field)).filter((value): value is Value & { type: 'integer' | 'double' } => value?.type === 'integer' || value?.type === 'double');
    results.set(aggregation.alias, aggregation.kind === 'sum' ? sum(numbers) : average(numbers));
  }
  return results;
}

/** An int while every input is an int and nothing overflows; otherwise a double. */
function sum(values: Array<Value & { type: 'integer' | 'double' }>): Value {
  let integer = 0n;
  let double = 0;
  let isInteger = true;
  for (const value of values) {
    if (value.type === 'integer' && isInteger) {
      const next = integer + value.value;
      if (next > int64Max || next < int64Min) {
        isInteger = false;
        double = Number(integer) + Number(value.value);
      } else {
        integer = next;
      }
    } else {
      if (isInteger) double = Number(integer);
      isInteger = false;
      double += value.type === 'integer' ? Number(value.value) : value.value;
    }
  }
  return isInteger ? { type: 'integer', value: integer } : { type: 'double', value: double };
}

function average(values: Array<Value & { type: 'integer' | 'double' }>): Value {
  if (values.length === 0) return nullValue;
  let total = 0;
  for (const value of values) total += value.type === 'integer' ? Number(value.value) : value.value;
  return { type: 'double', value: total / values.length };
}


