import type { DatabaseId } from '../core/paths.js';
import type { Filter, Query } from '../core/query.js';
import { fromValue } from './convert.js';
import { compareOrdered, Constrained, fault, isList, rulesEquals, RulesFault, RulesMap, RulesPath, RulesSet, typeName, type RulesValue } from './values.js';

/**
 * "Rules are not filters": a list is judged on what its query says about the documents it
 * could return, never on the documents. The query's filter is put in disjunctive form; each
 * disjunct (one per `in` value, per OR branch) is a scenario, and the rule must hold in every
 * one. In a scenario `resource.data.f` is the value of an `==` filter on f, or a Constrained
 * standing for the ranges, exclusions and `array-contains` on f; a field no filter names is
 * undefined (`Property f is undefined on object.`), as in Google's emulator.
 *
 * Checked against the emulator (1.19.9): with `allow list: if resource.data.n < 100`, a query
 * `n < 50` or `n < 100` or `5 < n < 10` is allowed, `n < 150`, `n <= 100` and `n > 5` are
 * refused; `n != 5` and `not-in [5]` satisfy `resource.data.n != 5`; `array-contains 'a'`
 * satisfies `resource.data.tags.hasAny(['a'])`; `'f' in resource.data` is false for an
 * unconstrained f; `in [u1, u2]` fails `owner == uid` once per value.
 */

/** What one disjunct of the query fixes. */
export interface Scenario {
  data: RulesMap;
  /** The document's relative path when the query fixes `__name__` with `==`. */
  documentPath?: string;
}

type Atom =
  | { field: string[]; key: boolean; kind: 'eq' | 'ne' | 'contains'; value: RulesValue }
  | { field: string[]; key: boolean; kind: 'lower' | 'upper'; value: RulesValue; inclusive: boolean };

export const maxScenarios = 1000;

/** The query's scenarios, or undefined when its filter has more disjuncts than it is sensible to check. */
export function scenariosOf(db: DatabaseId, query: Query): Scenario[] | undefined {
  const disjuncts = query.filter ? dnf(query.filter) : [[]];
  if (!disjuncts) return undefined;
  return disjuncts.map((atoms) => scenario(db, atoms));
}

function dnf(filter: Filter): Atom[][] | undefined {
  if (filter.kind === 'composite') {
    if (filter.op === 'OR') {
      const all: Atom[][] = [];
      for (const part of filter.filters) {
        const branch = dnf(part);
        if (!branch || all.length + branch.length > maxScenarios) return undefined;
        all.push(...branch);
      }
      return all;
    }
    let product: Atom[][] = [[]];
    for (const part of filter.filters) {
      const branch = dnf(part);
      if (!branch || product.length * branch.length > maxScenarios) return undefined;
      product = product.flatMap((left) => branch.map((right) => [...left, ...right]));
    }
    return product;
  }
  const field = filter.field.segments;
  const key = filter.field.isKey;
  if (filter.kind === 'unary') {
    const value = filter.op.endsWith('NAN') ? NaN : null;
    return [[{ field, key, kind: filter.op.startsWith('IS_NOT') ? 'ne' : 'eq', value }]];
  }
  const value = filter.value;
  const values = value.type === 'array' ? value.values : [];
  switch (filter.op) {
    case 'EQUAL':
      return [[{ field, key, kind: 'eq', value: fromValue(value) }]];
    case 'IN':
      return values.map((item) => [{ field, key, kind: 'eq', value: fromValue(item) }]);
    case 'NOT_EQUAL':
      return [[{ field, key, kind: 'ne', value: fromValue(value) }]];
    case 'NOT_IN':
      return [values.map((item) => ({ field, key, kind: 'ne', value: fromValue(item) }))];
    case 'ARRAY_CONTAINS':
      return [[{ field, key, kind: 'contains', value: fromValue(value) }]];
    case 'ARRAY_CONTAINS_ANY':
      return values.map((item) => [{ field, key, kind: 'contains', value: fromValue(item) }]);
    case 'LESS_THAN':
    case 'LESS_THAN_OR_EQUAL':
      return [[{ field, key, kind: 'upper', value: fromValue(value), inclusive: filter.op === 'LESS_THAN_OR_EQUAL' }]];
    case 'GREATER_THAN':
    case 'GREATER_THAN_OR_EQUAL':
      return [[{ field, key, kind: 'lower', value: fromValue(value), inclusive: filter.op === 'GREATER_THAN_OR_EQUAL' }]];
  }
}

function scenario(db: DatabaseId, atoms: Atom[]): Scenario {
  const root = new Map<string, RulesValue>();
  let documentPath: string | undefined;
  for (const atom of atoms) {
    if (atom.key) {
      if (atom.kind === 'eq' && atom.value instanceof RulesPath) {
        const segments = atom.value.segments;
        if (segments[1] === db.databaseId) documentPath = segments.slice(3).join('/');
      }
      continue;
    }
    let entries = root;
    for (const segment of atom.field.slice(0, -1)) {
      const existing = entries.get(segment);
      const child: SymbolicMap = existing instanceof SymbolicMap ? existing : new SymbolicMap(new Map());
      entries.set(segment, child);
      entries = child.mutableEntries;
    }
    const name = atom.field[atom.field.length - 1]!;
    const existing = entries.get(name);
    if (atom.kind === 'eq') {
      entries.set(name, atom.value);
      continue;
    }
    if (existing !== undefined && !(existing instanceof Constrained)) continue;
    const constrained = existing ?? new Constrained(name);
    entries.set(name, constrained);
    if (atom.kind === 'ne') constrained.excluded.push(atom.value);
    else if (atom.kind === 'contains') constrained.contained.push(atom.value);
    else if (atom.kind === 'upper') constrained.upper = tighter(constrained.upper, atom, -1);
    else if (atom.kind === 'lower') constrained.lower = tighter(constrained.lower, atom, 1);
  }
  return { data: new SymbolicMap(root), documentPath };
}

class SymbolicMap extends RulesMap {
  get mutableEntries(): Map<string, RulesValue> {
    return this.entries;
  }
}

/** Of two bounds on one side, the one that says more (`direction` 1 for lower bounds). */
function tighter(current: Constrained['lower'], atom: { value: RulesValue; inclusive: boolean }, direction: 1 | -1): Constrained['lower'] {
  if (!current) return { value: atom.value, inclusive: atom.inclusive };
  try {
    const order = compareOrdered(atom.value, current.value, '<') * direction;
    if (order > 0 || (order === 0 && !atom.inclusive)) return { value: atom.value, inclusive: atom.inclusive };
  } catch {
    // bounds of different types: keep the first
  }
  return current;
}

function undecided(value: Constrained): RulesFault {
  return fault(`The query does not decide resource.data.${value.name} for this expression.`);
}

const flipped: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };

/** A comparison with a Constrained side: true when the query implies it, else an error (deny). */
export function symbolicCompare(op: string, left: RulesValue, right: RulesValue): boolean {
  if (!(left instanceof Constrained)) return symbolicCompare(flipped[op]!, right, left);
  if (right instanceof Constrained) throw undecided(left);
  const excluded = left.excluded.some((value) => rulesEquals(value, right));
  if (op === '==' && excluded) return false;
  if (op === '!=' && excluded) return true;
  // Bounds decide against a value of their own type, and an integer bound against a float too: the
  // emulator takes a query's `n < 8` to imply the rule's `n <= 8.5`, but not a query's `n < 50.5`
  // to imply the rule's `n < 100`.
  const comparable = (bound: RulesValue) => typeName(bound) === typeName(right) || (typeName(bound) === 'int' && typeName(right) === 'float');
  const order = (bound: Constrained['lower']) => {
    if (!bound || !comparable(bound.value)) return undefined;
    try {
      return compareOrdered(bound.value, right, op);
    } catch {
      return undefined;
    }
  };
  const upper = order(left.upper);
  const lower = order(left.lower);
  if (op === '<' && upper !== undefined && (upper < 0 || (upper === 0 && !left.upper!.inclusive))) return true;
  if (op === '<=' && upper !== undefined && upper <= 0) return true;
  if (op === '>' && lower !== undefined && (lower > 0 || (lower === 0 && !left.lower!.inclusive))) return true;
  if (op === '>=' && lower !== undefined && lower >= 0) return true;
  throw undecided(left);
}

/** `x in field` for an `array-contains` field. */
export function symbolicIn(value: RulesValue, container: Constrained): boolean {
  if (container.contained.some((item) => rulesEquals(item, value))) return true;
  throw undecided(container);
}

export function symbolicMethod(value: Constrained, name: string, args: RulesValue[]): RulesValue {
  const list = args[0];
  const items = isList(list ?? null) ? (list as readonly RulesValue[]) : list instanceof RulesSet ? list.items : undefined;
  const known = (item: RulesValue) => value.contained.some((contained) => rulesEquals(contained, item));
  if (items && name === 'hasAny' && items.some(known)) return true;
  // The emulator knows only hasAny on a field an array-contains filter constrains (found by a random run).
  if (name === 'hasAll') throw fault('Function not found error: Name: [hasAll].');
  throw undecided(value);
}

