import type { DocumentDatabase } from '../firestore/core/database.js';
import type { Doc } from '../firestore/core/documents.js';
import { firestoreErrors } from '../firestore/core/errors.js';
import { documentKey, pathSegments, type DatabaseId } from '../firestore/core/paths.js';
import type { Query } from '../firestore/core/query.js';
import { parseStructuredQuery } from '../firestore/core/query-parse.js';
import { fieldsFromWire } from '../firestore/core/value-wire.js';
import { onlyKeys, wireObject } from '../firestore/core/wire-checks.js';
import { compileRules, evaluateRules, RulesCompileError, type CompiledRules, type RulesDecidingAllow, type RulesIssue, type RulesMethod, type RulesRequest } from '../firestore/rules/index.js';
import type { FirestoreGuard } from '../firestore/security/guard.js';
import type { RulesRegistry } from '../firestore/security/rules-registry.js';

export interface SimulationDeps {
  registry: RulesRegistry;
  database: DocumentDatabase;
  guard: FirestoreGuard;
  /** --dev: a database without rules is open, as the guard enforces it. */
  dev: boolean;
}

export interface SimulationAnswer {
  allowed: boolean;
  decidedBy?: RulesDecidingAllow;
  /** The engine's own account of the decision: `false for 'update' @ L7`, `No matching allow statements`. */
  reason?: string;
  issues?: RulesIssue[];
  error?: string;
}

export interface CheckAnswer {
  issues: RulesIssue[];
}

const methods: readonly RulesMethod[] = ['get', 'list', 'create', 'update', 'delete'];
/** Google's per-request lookup limit for one document or a query (security/guard.ts). */
const lookupLimit = 10;
const maxClaimsBytes = 16 * 1024;

/** `rules:check`: every issue of a source, errors and warnings, with line and column. */
export function checkRules(body: unknown): CheckAnswer {
  const wire = wireObject(body, 'body');
  onlyKeys(wire, ['source'], 'body');
  return { issues: compiled(sourceOf(wire.source)).issues };
}

/**
 * `rules:simulate`: judges one made-up request with the same engine the guard uses (the released
 * rules, or unsaved source), reading `get()`/`exists()` lookups from the database as it is. Nothing
 * is written. Compile errors and a database without rules are answers, not failures.
 */
export async function simulateRules(deps: SimulationDeps, db: DatabaseId, body: unknown): Promise<SimulationAnswer> {
  const wire = wireObject(body, 'body');
  onlyKeys(wire, ['source', 'method', 'path', 'auth', 'data', 'existing', 'query'], 'body');
  const method = methodOf(wire.method);
  const relative = pathOf(wire.path, method);
  const auth = authOf(wire.auth);
  const data = wire.data === undefined ? undefined : fieldsFromWire(wire.data, 'data');
  if (data && method !== 'create' && method !== 'update') throw firestoreErrors.invalidArgument('data is for create and update only.');
  const query = method === 'list' ? queryOf(db, relative, wire.query) : undefined;
  if (wire.query !== undefined && method !== 'list') throw firestoreErrors.invalidArgument('query is for list only.');

  let rules: CompiledRules | undefined;
  if (wire.source !== undefined) {
    const outcome = compiled(sourceOf(wire.source));
    if (!outcome.rules) return { allowed: false, issues: outcome.issues, error: 'The rules do not compile.' };
    rules = outcome.rules;
  } else {
    rules = await deps.registry.rulesFor(db);
    if (!rules) {
      return deps.dev
        ? { allowed: true, error: 'No rules are released for this database: in --dev it is open to every caller.' }
        : { allowed: false, error: 'No rules are released for this database: it is closed to all but the administrator.' };
    }
  }

  const key = method === 'list' ? undefined : documentKey(relative);
  const stored = key ? (await deps.database.getDocuments(db, [relative])).get(relative) : undefined;
  const existing = wire.existing === undefined ? stored : wire.existing === null ? undefined : { key: key!, fields: fieldsFromWire(wire.existing, 'existing'), createTime: stored?.createTime ?? 0, updateTime: stored?.updateTime ?? 0 };
  let after: Doc | undefined;
  if (key && (method === 'create' || method === 'update')) {
    // update: the write merges its fields over the document (a set with merge); create: the fields are the document.
    const fields = method === 'update' && existing ? new Map([...existing.fields, ...(data ?? [])]) : (data ?? new Map());
    after = { key, fields, createTime: existing?.createTime ?? 0, updateTime: existing?.updateTime ?? 0 };
  }
  const afterMap = new Map<string, Doc | undefined>(key ? [[relative, method === 'delete' ? undefined : (after ?? existing)]] : []);
  const reader = deps.guard.reader(db, afterMap);
  const request: RulesRequest = {
    db,
    method,
    path: relative,
    ...(query ? { query } : {}),
    auth,
    time: Date.now() * 1000,
    ...(existing && method !== 'create' && method !== 'list' ? { resource: existing } : {}),
    ...(after ? { requestResource: after } : {}),
    reader,
    budget: { limit: lookupLimit, seen: new Set() },
  };
  try {
    const decision = await evaluateRules(rules, request);
    return { allowed: decision.allowed, reason: decision.reason, ...(decision.decidedBy ? { decidedBy: decision.decidedBy } : {}) };
  } catch {
    return { allowed: false, error: 'The rules engine failed on this request; the guard would deny it.' };
  }
}

function compiled(source: string): { rules?: CompiledRules; issues: RulesIssue[] } {
  try {
    const rules = compileRules(source);
    return { rules, issues: [...rules.issues] };
  } catch (error) {
    if (error instanceof RulesCompileError) return { issues: error.issues };
    throw error;
  }
}

function sourceOf(raw: unknown): string {
  if (typeof raw !== 'string') throw firestoreErrors.invalidArgument("Invalid JSON payload received. Invalid value at 'source' (TYPE_STRING).");
  return raw;
}

function methodOf(raw: unknown): RulesMethod {
  if (typeof raw !== 'string' || !methods.includes(raw as RulesMethod)) throw firestoreErrors.invalidArgument(`method must be one of ${methods.join(', ')}.`);
  return raw as RulesMethod;
}

/** A document path for get/create/update/delete, a collection path for list; relative to `documents`. */
function pathOf(raw: unknown, method: RulesMethod): string {
  if (typeof raw !== 'string' || raw.replace(/^\/+/, '') === '') throw firestoreErrors.invalidArgument('path must name a document (or a collection, for list).');
  const relative = raw.replace(/^\/+/, '');
  const segments = pathSegments(relative);
  const wantsCollection = method === 'list';
  if ((segments.length % 2 === 1) !== wantsCollection) {
    throw firestoreErrors.invalidArgument(wantsCollection ? `list needs a collection path (odd segments), not "${relative.slice(0, 100)}".` : `${method} needs a document path (even segments), not "${relative.slice(0, 100)}".`);
  }
  return relative;
}

export function authOf(raw: unknown): RulesRequest['auth'] {
  if (raw === undefined || raw === null) return null;
  const wire = wireObject(raw, 'auth');
  onlyKeys(wire, ['uid', 'token'], 'auth');
  if (typeof wire.uid !== 'string' || wire.uid === '' || wire.uid.length > 128) throw firestoreErrors.invalidArgument('auth.uid must be a string of 1 to 128 characters.');
  const token = wire.token === undefined ? {} : wireObject(wire.token, 'auth.token');
  if (Buffer.byteLength(JSON.stringify(token)) > maxClaimsBytes) throw firestoreErrors.invalidArgument('auth.token is larger than 16 KiB.');
  // As in an ID token: the uid is also `sub`, unless the operator chose claims that say otherwise.
  return { uid: wire.uid, token: { sub: wire.uid, user_id: wire.uid, ...token } };
}

const operators: Record<string, string> = {
  '==': 'EQUAL',
  '!=': 'NOT_EQUAL',
  '<': 'LESS_THAN',
  '<=': 'LESS_THAN_OR_EQUAL',
  '>': 'GREATER_THAN',
  '>=': 'GREATER_THAN_OR_EQUAL',
  'array-contains': 'ARRAY_CONTAINS',
  'array-contains-any': 'ARRAY_CONTAINS_ANY',
  in: 'IN',
  'not-in': 'NOT_IN',
};

/**
 * The console's query shape (`where: [{fieldPath, op, value}]` with the SDK's operators and
 * Firestore JSON values, `orderBy: [{fieldPath, direction}]`, `limit`) as a structured query on
 * the collection, parsed by the database's own parser (so its refusals are the same).
 */
function queryOf(db: DatabaseId, collectionPath: string, raw: unknown): Query {
  const segments = collectionPath.split('/');
  const collectionId = segments.pop()!;
  const structured: Record<string, unknown> = { from: [{ collectionId }] };
  if (raw !== undefined) {
    const wire = wireObject(raw, 'query');
    onlyKeys(wire, ['where', 'orderBy', 'limit'], 'query');
    if (wire.where !== undefined) {
      if (!Array.isArray(wire.where) || wire.where.length > 30) throw firestoreErrors.invalidArgument('query.where must be a list of at most 30 filters.');
      const filters = wire.where.map((item: unknown, index: number) => {
        const filter = wireObject(item, `query.where[${index}]`);
        onlyKeys(filter, ['fieldPath', 'op', 'value'], `query.where[${index}]`);
        const op = typeof filter.op === 'string' ? (operators[filter.op] ?? (Object.values(operators).includes(filter.op) ? filter.op : undefined)) : undefined;
        if (op === undefined) throw firestoreErrors.invalidArgument(`query.where[${index}].op must be one of ${Object.keys(operators).join(' ')}.`);
        return { fieldFilter: { field: { fieldPath: filter.fieldPath }, op, value: filter.value } };
      });
      if (filters.length === 1) structured.where = filters[0];
      else if (filters.length > 1) structured.where = { compositeFilter: { op: 'AND', filters } };
    }
    if (wire.orderBy !== undefined) {
      if (!Array.isArray(wire.orderBy) || wire.orderBy.length > 10) throw firestoreErrors.invalidArgument('query.orderBy must be a list of at most 10 orders.');
      structured.orderBy = wire.orderBy.map((item: unknown, index: number) => {
        const order = wireObject(item, `query.orderBy[${index}]`);
        onlyKeys(order, ['fieldPath', 'direction'], `query.orderBy[${index}]`);
        if (order.direction !== undefined && order.direction !== 'asc' && order.direction !== 'desc') throw firestoreErrors.invalidArgument(`query.orderBy[${index}].direction must be asc or desc.`);
        return { field: { fieldPath: order.fieldPath }, direction: order.direction === 'desc' ? 'DESCENDING' : 'ASCENDING' };
      });
    }
    if (wire.limit !== undefined) structured.limit = wire.limit;
  }
  return parseStructuredQuery(db, segments.join('/'), structured);
}
