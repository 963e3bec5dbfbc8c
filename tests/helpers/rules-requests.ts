/**
 * The requests of the security-rules differential test (tests/rules/differential.test.ts), described
 * apart from any server, sent over REST as a user would, and reduced to the outcome both servers must agree on.
 *
 * Outcome: the HTTP status and error.status of every step (PERMISSION_DENIED is 403), and for allowed reads what
 * was read (document names found or missing, a count), never messages, times or the order of map keys.
 */
import { bearerFor, type Caller } from './rules-tokens.js';

// ---------------------------------------------------------------------------------------------------------------
// Values: plain JavaScript in the corpus, proto3 JSON on the wire

export type Plain = string | number | boolean | null | Date | { int: number } | { double: number } | { ref: string } | Plain[] | { [key: string]: Plain };
export type PlainFields = Record<string, Plain>;

/**
 * Whole numbers are integers unless wrapped as `{ double: n }`; `{ int: n }` says so explicitly. `{ ref: path }` is a
 * reference to a document of the project the value is sent to.
 */
export function toWireValue(value: Plain, projectId = ''): unknown {
  if (value === null) return { nullValue: null };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { integerValue: String(value) } : { doubleValue: value };
  if (value instanceof Date) return { timestampValue: value.toISOString() };
  if (Array.isArray(value)) return { arrayValue: { values: value.map((element) => toWireValue(element, projectId)) } };
  if ('ref' in value && Object.keys(value).length === 1 && typeof value.ref === 'string') return { referenceValue: `${databaseRoot(projectId)}/${value.ref}` };
  if ('int' in value && Object.keys(value).length === 1 && typeof value.int === 'number') return { integerValue: String(value.int) };
  if ('double' in value && Object.keys(value).length === 1 && typeof value.double === 'number') return { doubleValue: value.double };
  return { mapValue: { fields: toWireFields(value as PlainFields, projectId) } };
}

export function toWireFields(fields: PlainFields, projectId = ''): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, toWireValue(value, projectId)]));
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

export type FilterOp = 'EQUAL' | 'NOT_EQUAL' | 'LESS_THAN' | 'LESS_THAN_OR_EQUAL' | 'GREATER_THAN' | 'GREATER_THAN_OR_EQUAL' | 'IN' | 'NOT_IN' | 'ARRAY_CONTAINS' | 'ARRAY_CONTAINS_ANY';

export interface QuerySpec {
  /** The parent document ('' for the database root). */
  parent?: string;
  collection: string;
  /** A collection-group query (allDescendants). */
  group?: boolean;
  where?: Array<[field: string, op: FilterOp, value: Plain]>;
  /** The filters joined by OR instead of AND. */
  or?: boolean;
  orderBy?: Array<[field: string, direction?: 'ASCENDING' | 'DESCENDING']>;
  limit?: number;
}

export interface WriteSpec {
  /** create: exists=false; update: exists=true with an updateMask; set: no precondition; merge: updateMask of the fields given. */
  op: 'create' | 'update' | 'set' | 'merge' | 'delete';
  path: string;
  fields?: PlainFields;
  /** update only: the mask, when not the fields' top-level keys (a mask naming a field left out deletes it). */
  mask?: string[];
  /** Fields set to the server's request time. */
  serverTimestamps?: string[];
  /** Fields incremented by this number. */
  increments?: Record<string, number>;
}

export type Operation =
  | { kind: 'get'; path: string }
  | { kind: 'batchGet'; paths: string[] }
  | { kind: 'query'; query: QuerySpec }
  | { kind: 'count'; query: QuerySpec }
  | { kind: 'commit'; writes: WriteSpec[] }
  /** beginTransaction (readWrite), batchGet of `reads` in it, commit of `writes` with it. */
  | { kind: 'transaction'; reads: string[]; writes: WriteSpec[] };

export interface RulesCase {
  caller: Caller;
  operation: Operation;
  /** What the case is about, for reports. */
  note?: string;
}

/** The documents a case may change (restored to the seed after it). */
export function writtenPaths(operation: Operation): string[] {
  return operation.kind === 'commit' || operation.kind === 'transaction' ? operation.writes.map((write) => write.path) : [];
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

export interface RulesTarget {
  label: string;
  url: string;
  projectId: string;
}

export const databaseRoot = (projectId: string) => `projects/${projectId}/databases/(default)/documents`;
const documentName = (target: RulesTarget, path: string) => `${databaseRoot(target.projectId)}/${path}`;

export interface Step {
  status: number;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
}

/** The rows and errors of Firestore's REST answers, as far as the outcome reads them. */
interface WireRow {
  document?: { name: string };
  found?: { name: string };
  missing?: string;
  result?: { aggregateFields?: Record<string, { integerValue?: string }> };
}

/** error.status and error.message of an error answer, when it has them. */
export function errorOf(step: Step): { status?: string; message?: string } | undefined {
  const body = step.body as { error?: { status?: unknown; message?: unknown } } | null;
  if (typeof body !== 'object' || body === null || typeof body.error !== 'object' || body.error === null) return undefined;
  const { status, message } = body.error;
  return { status: typeof status === 'string' ? status : undefined, message: typeof message === 'string' ? message : undefined };
}

const rowsOf = (body: unknown): WireRow[] => {
  if (!Array.isArray(body)) throw new Error('not an array of rows');
  return body as WireRow[];
};

export async function send(target: RulesTarget, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body: unknown, authorization: string | undefined): Promise<Step> {
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

const documentsUrl = (target: RulesTarget, parent = '') => `/v1/${databaseRoot(target.projectId)}${parent ? `/${parent}` : ''}`;

export function structuredQuery(query: QuerySpec, projectId: string): Record<string, unknown> {
  const filters = (query.where ?? []).map(([field, op, value]) => ({ fieldFilter: { field: { fieldPath: field }, op, value: toWireValue(value, projectId) } }));
  const where = filters.length === 0 ? undefined : filters.length === 1 ? filters[0] : { compositeFilter: { op: query.or ? 'OR' : 'AND', filters } };
  return {
    from: [{ collectionId: query.collection, ...(query.group && { allDescendants: true }) }],
    ...(where !== undefined && { where }),
    ...(query.orderBy && { orderBy: query.orderBy.map(([field, direction]) => ({ field: { fieldPath: field }, direction: direction ?? 'ASCENDING' })) }),
    ...(query.limit !== undefined && { limit: query.limit }),
  };
}

export function wireWrite(target: RulesTarget, write: WriteSpec): Record<string, unknown> {
  const name = documentName(target, write.path);
  if (write.op === 'delete') return { delete: name };
  const fields = write.fields ?? {};
  const transforms = [
    ...(write.serverTimestamps ?? []).map((fieldPath) => ({ fieldPath, setToServerValue: 'REQUEST_TIME' })),
    ...Object.entries(write.increments ?? {}).map(([fieldPath, by]) => ({ fieldPath, increment: toWireValue(by, target.projectId) })),
  ];
  const mask = write.op === 'update' ? (write.mask ?? Object.keys(fields)) : write.op === 'merge' ? Object.keys(fields) : undefined;
  return {
    update: { name, fields: toWireFields(fields, target.projectId) },
    ...(mask && { updateMask: { fieldPaths: mask } }),
    ...(transforms.length > 0 && { updateTransforms: transforms }),
    ...(write.op === 'create' && { currentDocument: { exists: false } }),
    ...(write.op === 'update' && { currentDocument: { exists: true } }),
  };
}

export interface Outcome {
  /** A line per step; equal between servers that agree. */
  outcome: string;
  /** The error messages of refused steps, for reports only (the emulator's say which allow failed and why). */
  messages: string[];
}

/** Sends one case as its caller. */
export async function outcomeOf(target: RulesTarget, rulesCase: RulesCase): Promise<Outcome> {
  const messages: string[] = [];
  const outcome = await stepsOutcome(target, rulesCase, (step) => {
    const message = errorOf(step)?.message;
    if (step.status !== 200 && message !== undefined) messages.push(message.trim());
  });
  return { outcome, messages };
}

async function stepsOutcome(target: RulesTarget, rulesCase: RulesCase, onStep: (step: Step) => void): Promise<string> {
  const describe = (step: Step, onSuccess: (body: unknown) => string) => {
    onStep(step);
    return describeStep(step, onSuccess);
  };
  const authorization = bearerFor(target.projectId, rulesCase.caller);
  const { operation } = rulesCase;
  const root = documentsUrl(target);
  switch (operation.kind) {
    case 'get': {
      const step = await send(target, 'GET', `${root}/${operation.path}`, undefined, authorization);
      return describe(step, () => 'found');
    }
    case 'batchGet': {
      const step = await send(target, 'POST', `${root}:batchGet`, { documents: operation.paths.map((path) => documentName(target, path)) }, authorization);
      return describe(step, (body) => batchGetResults(target, body));
    }
    case 'query': {
      const step = await send(target, 'POST', `${documentsUrl(target, operation.query.parent)}:runQuery`, { structuredQuery: structuredQuery(operation.query, target.projectId) }, authorization);
      return describe(step, (body) => `[${rowsOf(body).flatMap((row) => (row.document ? [relative(target, row.document.name)] : [])).join(', ')}]`);
    }
    case 'count': {
      const request = { structuredAggregationQuery: { structuredQuery: structuredQuery(operation.query, target.projectId), aggregations: [{ alias: 'n', count: {} }] } };
      const step = await send(target, 'POST', `${documentsUrl(target, operation.query.parent)}:runAggregationQuery`, request, authorization);
      return describe(step, (body) => `count ${rowsOf(body).find((row) => row.result)?.result?.aggregateFields?.n?.integerValue}`);
    }
    case 'commit': {
      const step = await send(target, 'POST', `${root}:commit`, { writes: operation.writes.map((write) => wireWrite(target, write)) }, authorization);
      return describe(step, () => 'committed');
    }
    case 'transaction':
      return transactionOutcome(target, operation, authorization, describe);
  }
}

type Describe = (step: Step, onSuccess: (body: unknown) => string) => string;

async function transactionOutcome(target: RulesTarget, operation: Extract<Operation, { kind: 'transaction' }>, authorization: string | undefined, describe: Describe): Promise<string> {
  const root = documentsUrl(target);
  const begun = await send(target, 'POST', `${root}:beginTransaction`, { options: { readWrite: {} } }, authorization);
  const lines = [`begin ${describe(begun, () => 'ok')}`];
  const transaction = (begun.body as { transaction?: string } | null)?.transaction;
  if (begun.status !== 200 || !transaction) return lines.join('; ');
  let finished = false;
  try {
    if (operation.reads.length > 0) {
      const read = await send(target, 'POST', `${root}:batchGet`, { documents: operation.reads.map((path) => documentName(target, path)), transaction }, authorization);
      lines.push(`read ${describe(read, (body) => batchGetResults(target, body))}`);
    }
    const committed = await send(target, 'POST', `${root}:commit`, { writes: operation.writes.map((write) => wireWrite(target, write)), transaction }, authorization);
    finished = committed.status === 200;
    lines.push(`commit ${describe(committed, () => 'committed')}`);
  } finally {
    // A refused read or commit may leave the transaction holding its locks until it expires; the restore after the
    // case must not wait on them. The rollback's own answer is not compared.
    if (!finished) await send(target, 'POST', `${root}:rollback`, { transaction }, authorization);
  }
  return lines.join('; ');
}

function relative(target: RulesTarget, name: string): string {
  const prefix = `${databaseRoot(target.projectId)}/`;
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

function batchGetResults(target: RulesTarget, body: unknown): string {
  const rows = rowsOf(body).map((row) => (row.found ? `${relative(target, row.found.name)} found` : `${relative(target, String(row.missing))} missing`));
  // The emulator answers in no promised order.
  return `[${rows.sort().join(', ')}]`;
}

function describeStep(step: Step, onSuccess: (body: unknown) => string): string {
  if (step.status === 200) {
    try {
      return `200 ${onSuccess(step.body)}`;
    } catch (error) {
      return `200 <unreadable answer: ${(error as Error).message}>`;
    }
  }
  return `${step.status} ${errorOf(step)?.status ?? `<no error.status: ${String(JSON.stringify(step.body)).slice(0, 120)}>`}`;
}
