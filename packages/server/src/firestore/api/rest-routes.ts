import type { WorkerRelay } from '../../http/worker-relay.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { aggregate, aggregationPlan, parseAggregations } from '../core/aggregation.js';
import type { DocumentDatabase } from '../core/database.js';
import { docToWire } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { checkDatabase, documentKey, documentKeyFromName, fullName, pathSegments, type DatabaseId } from '../core/paths.js';
import { formatMicros, toWire } from '../core/value-wire.js';
import { parseWritesInSlices, writeResultToWire, type Write } from '../core/writes.js';
import type { FirestoreAccess, FirestoreCaller } from './access.js';
import type { RequestJudge } from '../security/guard.js';
import { createDocument, getDocument, listDocuments, maskFrom, patchDocument, preconditionFrom, type Body, type QueryParams } from './document-handlers.js';
import { onlyKeys } from '../core/wire-checks.js';
import { answerTime, beginWith, checkedReadTime, concurrencyFor, endIfBegun, readConsistency } from './read-consistency.js';
import { toApiError } from '../../http/error-handler.js';
import { isFromLocalPage } from '../../http/browser-origin.js';
import { peerOf } from '../../auth/api/functions-credential.js';

/** Firestore allows 10 MiB per request. */
export const firestoreBodyLimit = 10 * 1024 * 1024;

const restVerbs = new Set([
  'batchGet',
  'beginTransaction',
  'commit',
  'rollback',
  'runQuery',
  'runAggregationQuery',
  'partitionQuery',
  'listCollectionIds',
  'batchWrite',
  'listen',
  'write',
  'executePipeline',
]);

/** The route every REST document call matches; the verb, if any, is read from its path (restVerbOf). */
export const firestoreRestRoute = '/v1/projects/:project/databases/:database/*';

/**
 * The verb a REST call names (`documents/c:runQuery`), as the dispatcher reads it: a POST whose
 * path's last segment ends in `:<verb>`. A document whose id merely ends so (`c/x:runQuery`) is
 * written by PATCH and DELETE, which name no verb.
 */
export function restVerbOf(method: string, path: string): string | undefined {
  const colon = path.lastIndexOf(':');
  if (method !== 'POST' || colon <= path.lastIndexOf('/')) return undefined;
  const verb = path.slice(colon + 1);
  return restVerbs.has(verb) ? verb : undefined;
}

interface Target {
  db: DatabaseId;
  /** Path under `documents`, '' for the root. */
  path: string;
  verb?: string;
}

/**
 * The Firestore v1 REST surface: `/v1/projects/{p}/databases/{d}/documents…`. Thin: it parses
 * requests into DocumentDatabase calls and formats answers in proto3 JSON. Server-streaming
 * calls (batchGet, runQuery, runAggregationQuery) answer one JSON array, as the SDKs expect.
 */
export async function registerFirestoreRestRoutes(app: FastifyInstance, database: DocumentDatabase, access: FirestoreAccess, relay?: WorkerRelay): Promise<void> {
  await app.register(async (scope) => {
    // A worker of --workers: a request in a transaction another worker began is that worker's.
    if (relay) {
      scope.addHook('preHandler', async (request, reply) => {
        const named = (request.body as { transaction?: unknown } | undefined)?.transaction ?? (request.query as { transaction?: unknown } | undefined)?.transaction;
        const owner = relay.ownerOfTransaction(named);
        if (owner === undefined) return;
        const body = request.method === 'POST' || request.method === 'PATCH' ? JSON.stringify(request.body ?? {}) : undefined;
        if (!(await relay.relay(owner, request, reply, body))) throw firestoreErrors.aborted('The transaction began in a worker that is being started again; retry it.');
        return reply;
      });
    }
    // Browsers send the JSON as text/plain so no CORS preflight is needed; GET and DELETE may
    // carry a content type and no body.
    const json = scope.getDefaultJsonParser('error', 'error');
    const parser = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void) => {
      if (body.length === 0) done(null, {});
      else json(request, body.toString(), done);
    };
    scope.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: firestoreBodyLimit }, parser);
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: firestoreBodyLimit }, parser);

    scope.route({
      method: ['GET', 'POST', 'PATCH', 'DELETE'],
      url: firestoreRestRoute,
      bodyLimit: firestoreBodyLimit,
      handler: async (request, reply) => {
        const target = parseTarget(request, access);
        const caller = await access.callerOf(request.headers.authorization, target.db.projectId, Boolean(request.consoleOperator), peerOf(request));
        const answer = await dispatch(database, access, caller, request, target);
        void reply.header('content-type', 'application/json; charset=utf-8');
        return answer;
      },
    });

    scope.delete('/emulator/v1/projects/:project/databases/:database/documents', async (request) => {
      const params = request.params as { project: string; database: string };
      const db = checkDatabase(params.project, params.database, access.databaseIdRule);
      access.checkEmulatorEndpoint(await access.callerOf(request.headers.authorization, db.projectId, Boolean(request.consoleOperator), peerOf(request)), request.fromForeignPage === true && !isFromLocalPage(request));
      await database.clear(db);
      return {};
    });
  });
}

function parseTarget(request: FastifyRequest, access: FirestoreAccess): Target {
  const params = request.params as { project: string; database: string; '*': string };
  const db = checkDatabase(params.project, params.database, access.databaseIdRule);
  let rest = params['*'];
  const verb = restVerbOf(request.method, rest);
  if (verb !== undefined) rest = rest.slice(0, rest.lastIndexOf(':'));
  if (rest !== 'documents' && !rest.startsWith('documents/')) throw firestoreErrors.notFound(`No route for ${request.method} ${request.url.split('?')[0]}.`);
  return { db, path: rest === 'documents' ? '' : rest.slice('documents/'.length), ...(verb ? { verb } : {}) };
}

async function dispatch(database: DocumentDatabase, access: FirestoreAccess, caller: FirestoreCaller, request: FastifyRequest, target: Target): Promise<unknown> {
  const query = (request.query ?? {}) as QueryParams;
  const body = bodyOf(request);
  const { db, path } = target;
  if (target.verb !== undefined) return callVerb(database, access, caller, db, path, target.verb, body);
  const judge = access.judge(caller, db);
  const segments = pathSegments(path);
  switch (request.method) {
    case 'GET':
      return segments.length % 2 === 0 ? getDocument(database, judge, db, path, query) : listDocuments(database, judge, db, segments, query);
    case 'PATCH':
      return patchDocument(database, judge, db, path, query, body);
    case 'DELETE': {
      const write: Write = { kind: 'delete', key: documentKey(path), transforms: [], ...preconditionFrom(query) };
      await database.commit(db, [write], undefined, judge.writes({ batch: false }));
      return {};
    }
    default:
      return createDocument(database, judge, db, segments, query, body);
  }
}

/**
 * The RPCs named by a verb, over proto3 JSON: REST calls this, and so does the gRPC adapter after
 * converting its messages. Server-streaming RPCs answer an array of their responses.
 */
export async function callVerb(database: DocumentDatabase, access: FirestoreAccess, caller: FirestoreCaller, db: DatabaseId, path: string, verb: string, body: Body): Promise<unknown> {
  if (verb === 'listCollectionIds') {
    access.checkAdmin(caller);
    return listCollectionIds(database, db, path, body);
  }
  const judge = access.judge(caller, db);
  switch (verb) {
    case 'batchGet':
      return batchGet(database, judge, db, body);
    case 'beginTransaction':
      await judge.ensureAccess();
      return beginTransaction(database, judge, db, body);
    case 'commit':
      return commit(database, judge, db, body);
    case 'rollback': {
      await judge.ensureAccess();
      onlyFields(body, ['transaction']);
      database.transactions.end(database.transactions.use(database.dbKey(db), body.transaction));
      return {};
    }
    case 'runQuery':
      return runQuery(database, judge, db, path, body);
    case 'runAggregationQuery':
      return runAggregationQuery(database, judge, db, path, body);
    case 'batchWrite':
      return batchWrite(database, judge, db, body);
    case 'partitionQuery':
      return partitionQuery(database, judge, db, path, body);
    default:
      throw firestoreErrors.unimplemented(`${verb} is not supported over REST by Hearth.`);
  }
}

function bodyOf(request: FastifyRequest): Body {
  const body = request.body;
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw firestoreErrors.invalidArgument('Invalid JSON payload received. Expected an object.');
  return body as Body;
}

function onlyFields(body: Body, allowed: readonly string[]): void {
  onlyKeys(body, allowed, 'body');
}

function bodyMask(body: Body): string[][] | undefined {
  if (body.mask === undefined) return undefined;
  if (typeof body.mask !== 'object' || body.mask === null) throw firestoreErrors.invalidArgument('mask must be a DocumentMask.');
  return maskFrom((body.mask as { fieldPaths?: unknown }).fieldPaths ?? []);
}

// ---- transactions in read requests ------------------------------------------------------------

async function beginTransaction(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, body: Body): Promise<{ transaction: string }> {
  onlyFields(body, ['options']);
  return { transaction: (await beginWith(database, db, body.options, concurrencyFor(judge.caller))).id };
}


// ---- verbs ----------------------------------------------------------------------------------

async function batchGet(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, body: Body): Promise<unknown[]> {
  onlyFields(body, ['documents', 'mask', 'transaction', 'newTransaction', 'readTime']);
  if (!Array.isArray(body.documents)) throw firestoreErrors.invalidArgument('documents must be a list of document names.');
  const keys = body.documents.map((name, i) => documentKeyFromName(db, name, `documents[${i}]`));
  const mask = bodyMask(body);
  const consistency = await readConsistency(database, db, body, judge.caller);
  const { transaction, isNew } = consistency;
  const paths = keys.map((key) => key.path);
  // Judged on the versions read, before the transaction (if any) records them.
  const docs = await endIfBegun(database, consistency, () => database.getDocuments(db, paths, consistency, (found) => judge.get(paths, found)));
  const readTime = await answerTime(database, db, consistency);
  const answers: unknown[] = keys.map((key) => {
    const doc = docs.get(key.path);
    return doc ? { found: docToWire(db, doc, mask), readTime } : { missing: fullName(db, key.path), readTime };
  });
  // The transaction begun goes first, on its own, as Google's emulator sends it.
  if (isNew && transaction) answers.unshift({ transaction: transaction.id });
  return answers;
}

async function commit(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, body: Body): Promise<unknown> {
  onlyFields(body, ['writes', 'transaction']);
  const writes = await parseWritesInSlices(db, body.writes);
  const transaction = body.transaction === undefined ? undefined : database.transactions.use(database.dbKey(db), body.transaction);
  if (!writes.length) await judge.ensureAccess();
  const outcome = await database.commit(db, writes, transaction, judge.writes({ batch: writes.length > 1 || transaction !== undefined }));
  return { writeResults: outcome.writeResults.map(writeResultToWire), commitTime: formatMicros(outcome.commitTime) };
}

async function batchWrite(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, body: Body): Promise<unknown> {
  onlyFields(body, ['writes', 'labels']);
  const writes = await parseWritesInSlices(db, body.writes);
  await judge.ensureAccess();
  // Each write stands alone: a denied one fails with its own status, as any other failure does.
  const outcomes = await database.batchWrite(db, writes, judge.writes({ batch: false }));
  return {
    writeResults: outcomes.map((outcome) => (outcome.result ? writeResultToWire(outcome.result) : {})),
    status: outcomes.map((outcome) => {
      return outcome.error ? toApiError(outcome.error).toRpcStatus() : {};
    }),
  };
}


async function runQuery(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, parent: string, body: Body): Promise<unknown[]> {
  onlyFields(body, ['structuredQuery', 'transaction', 'newTransaction', 'readTime', 'parent', 'explainOptions']);
  if (body.structuredQuery === undefined) throw firestoreErrors.invalidArgument('A query must be set.');
  const query = database.parseQuery(db, parent, body.structuredQuery);
  const explain = parseExplainOptions(body.explainOptions);
  const consistency = await readConsistency(database, db, body, judge.caller);
  const { transaction, isNew } = consistency;
  const result = await endIfBegun(database, consistency, async () => database.runQuery(db, query, consistency, await judge.query(query, consistency.readTime)));
  const readTime = await answerTime(database, db, consistency);
  const planSummary = { indexesUsed: result.indexesUsed };
  if (explain && !explain.analyze) return [{ explainMetrics: { planSummary } }];
  const answers: Array<Record<string, unknown>> = [];
  if (isNew && transaction) answers.push({ transaction: transaction.id, readTime });
  for (const doc of result.docs) answers.push({ document: docToWire(db, doc, query.select), readTime });
  if (!answers.length || (isNew && answers.length === 1)) answers.push({ readTime });
  const last = answers[answers.length - 1]!;
  // Results skipped by the offset before a response are counted on it: the first after the skip.
  if (result.skipped) answers.find((answer) => answer.document !== undefined || answer === last)!.skippedResults = result.skipped;
  last.done = true;
  if (explain) {
    last.explainMetrics = {
      planSummary,
      executionStats: {
        resultsReturned: String(result.docs.length),
        readOperations: String(result.docs.length),
        debugStats: { documents_scanned: String(result.documentsScanned) },
      },
    };
  }
  return answers;
}

async function runAggregationQuery(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, parent: string, body: Body): Promise<unknown[]> {
  onlyFields(body, ['structuredAggregationQuery', 'transaction', 'newTransaction', 'readTime', 'parent', 'explainOptions']);
  const aggregationQuery = body.structuredAggregationQuery as { structuredQuery?: unknown; aggregations?: unknown } | undefined;
  if (typeof aggregationQuery !== 'object' || aggregationQuery === null || aggregationQuery.structuredQuery === undefined) {
    throw firestoreErrors.invalidArgument('A structuredAggregationQuery with a structuredQuery must be set.');
  }
  const query = database.parseQuery(db, parent, aggregationQuery.structuredQuery);
  const aggregations = parseAggregations(aggregationQuery.aggregations);
  const consistency = await readConsistency(database, db, body, judge.caller);
  const { transaction, isNew } = consistency;
  const plan = aggregationPlan(db, query, aggregations);
  // The rules judge the query as asked (its limit included) and the documents it covers, not the
  // others the query ran over to find them.
  const { docs } = await endIfBegun(database, consistency, async () => {
    const check = await judge.query(query, consistency.readTime);
    return database.runQuery(db, plan.query, consistency, check && ((found) => check(plan.cover(found))));
  });
  const results = aggregate(db, aggregations, plan.cover(docs));
  const aggregateFields: Record<string, unknown> = {};
  for (const [alias, value] of results) Object.defineProperty(aggregateFields, alias, { value: toWire(value), enumerable: true });
  const answer: Record<string, unknown> = { result: { aggregateFields }, readTime: await answerTime(database, db, consistency), done: true };
  if (isNew && transaction) answer.transaction = transaction.id;
  return [answer];
}

/**
 * Split points of a collection group, `pageSize` at a time (all when 0 or absent); the page token
 * is the index of the next point. Judged as a `list` of the query, which it reveals the names of.
 */
async function partitionQuery(database: DocumentDatabase, judge: RequestJudge, db: DatabaseId, parent: string, body: Body): Promise<unknown> {
  onlyFields(body, ['structuredQuery', 'partitionCount', 'pageToken', 'pageSize', 'readTime', 'parent']);
  if (body.structuredQuery === undefined) throw firestoreErrors.invalidArgument('A query must be set.');
  const query = database.parseQuery(db, parent, body.structuredQuery);
  const partitionCount = wholeNumber(body.partitionCount, 'partition_count', Number.MAX_SAFE_INTEGER);
  if (partitionCount < 1) throw firestoreErrors.invalidArgument('partition_count must be positive.');
  const pageSize = body.pageSize === undefined ? 0 : wholeNumber(body.pageSize, 'page_size', 2 ** 31 - 1);
  const token = body.pageToken === undefined || body.pageToken === '' ? 0 : Number(/^p(\d{1,9})$/.exec(Buffer.from(String(body.pageToken), 'base64url').toString())?.[1] ?? NaN);
  if (!Number.isInteger(token)) throw firestoreErrors.invalidArgument('Invalid page token.');
  const readTime = body.readTime === undefined ? undefined : await checkedReadTime(database, db, body.readTime);
  // Split points are names only, of an unfiltered query: `list` on its scope.
  await judge.query(query, readTime);
  const points = await database.partitionPoints(db, query, partitionCount, readTime);
  const end = pageSize > 0 ? Math.min(points.length, token + pageSize) : points.length;
  const answer: { partitions: unknown[]; nextPageToken?: string } = {
    partitions: points.slice(token, end).map((path) => ({ values: [{ referenceValue: fullName(db, path) }] })),
  };
  if (end < points.length) answer.nextPageToken = Buffer.from(`p${end}`).toString('base64url');
  return answer;
}

/** An int64 or int32 field of proto3 JSON: a number or a decimal string, not negative. */
function wholeNumber(raw: unknown, name: string, max: number): number {
  const value = typeof raw === 'string' && /^-?\d{1,20}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value > max) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${name}'.`);
  }
  if (value < 0) throw firestoreErrors.invalidArgument(`${name} must not be negative.`);
  return value;
}

/** Query explain: the plan only, or (analyze) the results with what running them took. */
function parseExplainOptions(raw: unknown): { analyze: boolean } | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null) throw firestoreErrors.invalidArgument('explainOptions must be an object.');
  const analyze = (raw as { analyze?: unknown }).analyze;
  if (analyze !== undefined && typeof analyze !== 'boolean') throw firestoreErrors.invalidArgument('explainOptions.analyze must be a boolean.');
  return { analyze: analyze === true };
}

async function listCollectionIds(database: DocumentDatabase, db: DatabaseId, parent: string, body: Body): Promise<unknown> {
  onlyFields(body, ['pageSize', 'pageToken', 'readTime']);
  const readTime = body.readTime === undefined ? undefined : await checkedReadTime(database, db, body.readTime);
  const ids = await database.listCollectionIds(db, parent, readTime);
  const pageSize = typeof body.pageSize === 'number' && body.pageSize > 0 ? body.pageSize : ids.length;
  const start = typeof body.pageToken === 'string' && body.pageToken ? ids.findIndex((id) => id > Buffer.from(body.pageToken as string, 'base64url').toString()) : 0;
  const page = start < 0 ? [] : ids.slice(start, start + pageSize);
  const answer: { collectionIds: string[]; nextPageToken?: string } = { collectionIds: page };
  if (start >= 0 && start + pageSize < ids.length) answer.nextPageToken = Buffer.from(page[page.length - 1]!).toString('base64url');
  return answer;
}

