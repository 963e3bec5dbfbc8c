import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { requestErrors } from '../http/api-error.js';
import type { AuditEntry, AuditLog } from '../storage/audit-log.js';
import { auditSummary } from './audit-summary.js';
import { requireOperator } from './console-gate.js';
import { firestoreRestRoute, restVerbOf } from '../firestore/api/rest-routes.js';
import { consolePrefix } from './session-routes.js';

const changingMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Calls that change nothing though their method is POST (Google's APIs query by POST) or that only
 * judge, decided by the route that matched and the verb its router reads, never by the text of the
 * URL: a document whose id ends in `:runQuery` or `:lookup` is written all the same, and audited.
 * Routes by the last segment of their template (constant text, `::` being a literal colon).
 */
const readOnlyRoutes = new Set(['accounts::lookup', 'accounts::query', 'rules::check', 'rules::simulate']);
/** Firestore REST verbs that only read (or open and end a read-only transaction). */
const readOnlyRestVerbs = new Set(['batchGet', 'beginTransaction', 'rollback', 'runQuery', 'runAggregationQuery', 'partitionQuery', 'listCollectionIds']);

/** WebChannel's Listen/Write: audited only for the writes of a Write session the console opened (webchannel.ts marks them). */
const channelRoute = '/google.firestore.v1.Firestore/';

export interface AuditDeps {
  log: AuditLog;
  logger: Logger;
  isOwnerCredential(request: FastifyRequest): boolean;
  clock: () => number;
}

/**
 * Writes an entry for every change made with a console session, after its answer (so the status
 * is known): successful or refused, what was asked is on record. Sign-ins and sign-outs of the
 * console are changes too.
 */
export function auditConsoleChanges(app: FastifyInstance, deps: AuditDeps): void {
  // onSend, not onResponse: the entry is written before the operator sees the answer, so a change
  // acknowledged to the console is already on record (an asynchronous log such as PostgreSQL's too).
  // Every request passes here; only the console's changes wait (`done` then), the rest go on at once without a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const channelWrite = request.consoleChannelWrite;
    const operator = channelWrite?.operator || request.consoleOperator || (isSessionChange(request, reply) ? request.consoleSessionOperator : '') || (isFailedSignIn(request, reply) ? failedSignInOperator : '');
    if (!operator || !changingMethods.has(request.method)) return done(null, payload);
    if (!channelWrite && changesNothing(request)) return done(null, payload);
    const path = (request.url.split('?')[0] ?? '').slice(0, 1000);
    void record(request, reply, operator, path).then(() => done(null, payload));
  });

  async function record(request: FastifyRequest, reply: FastifyReply, operator: string, path: string): Promise<void> {
    const channelWrite = request.consoleChannelWrite;
    try {
      await deps.log.append({
        at: deps.clock(),
        operator,
        address: request.ip,
        userAgent: String(request.headers['user-agent'] ?? '').slice(0, 300),
        method: request.method,
        path,
        status: reply.statusCode,
        summary: auditSummary(`${request.method} ${path}`, channelWrite ? { messages: channelWrite.messages } : request.body),
      });
    } catch (err) {
      // The change is already made; a lost audit entry must at least be loud.
      deps.logger.error({ err, method: request.method, path }, 'could not write the audit entry');
    }
  }
}

/** A console sign-in that succeeded (the request had no session yet) or a sign-out. */
function isSessionChange(request: FastifyRequest, reply: FastifyReply): boolean {
  return request.routeOptions.url === `${consolePrefix}/session` && reply.statusCode === 200 && request.consoleSessionOperator !== '';
}

/** Who a refused console sign-in is recorded under: nobody was signed in. */
export const failedSignInOperator = '(failed sign-in)';

/**
 * A console sign-in refused for a wrong admin key or ID token (401/403): recorded, as attempts on the
 * console must be visible. Refusals of the throttle (429) are not: the throttle bounds the records.
 */
function isFailedSignIn(request: FastifyRequest, reply: FastifyReply): boolean {
  return request.routeOptions.url === `${consolePrefix}/session` && request.method === 'POST' && (reply.statusCode === 401 || reply.statusCode === 403);
}

/** Whether the matched route (and the verb it read) only reads or judges; an unmatched request is audited. */
function changesNothing(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route === undefined) return false;
  if (route.startsWith(channelRoute)) return true;
  if (route === firestoreRestRoute) {
    const verb = restVerbOf(request.method, (request.params as { '*'?: string })['*'] ?? '');
    return verb !== undefined && readOnlyRestVerbs.has(verb);
  }
  return readOnlyRoutes.has(route.slice(route.lastIndexOf('/') + 1));
}

const maxPageSize = 1000;

/** `GET /hearth/v1/console/audit` (a page, newest first) and `GET .../audit:export` (all, NDJSON). */
export function registerAuditRoutes(app: FastifyInstance, deps: AuditDeps): void {
  app.get(`${consolePrefix}/audit`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const query = request.query as Record<string, unknown>;
    onlyParams(query, ['pageSize', 'pageToken']);
    const pageSize = pageSizeOf(query.pageSize);
    const beforeId = query.pageToken === undefined ? undefined : idOfToken(query.pageToken);
    const entries = await deps.log.list(pageSize + 1, beforeId);
    const page = entries.slice(0, pageSize);
    return { entries: page, ...(entries.length > pageSize ? { nextPageToken: tokenOf(page[page.length - 1]!) } : {}) };
  });

  app.get(`${consolePrefix}/audit:export`, async (request, reply) => {
    requireOperator(request, deps.isOwnerCredential);
    onlyParams(request.query as Record<string, unknown>, []);
    void reply
      .type('application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="hearth-audit-${new Date(deps.clock()).toISOString().slice(0, 10)}.ndjson"`)
      .header('cache-control', 'no-store');
    return reply.send(Readable.from(exportLines(deps.log)));
  });
}

async function* exportLines(log: AuditLog): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    const batch = await log.listForward(500, after);
    if (batch.length === 0) return;
    yield batch.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    after = batch[batch.length - 1]!.id;
  }
}

function onlyParams(query: Record<string, unknown>, allowed: string[]): void {
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) throw requestErrors.invalidArgument(`Unknown query parameter "${name.slice(0, 40)}".`);
  }
}

function pageSizeOf(value: unknown): number {
  if (value === undefined) return 50;
  if (typeof value !== 'string' || !/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > maxPageSize) {
    throw requestErrors.invalidArgument(`pageSize must be a whole number from 1 to ${maxPageSize}.`);
  }
  return Number(value);
}

function tokenOf(entry: AuditEntry): string {
  return Buffer.from(`a${entry.id}`).toString('base64url');
}

function idOfToken(value: unknown): string {
  const decoded = typeof value === 'string' && value.length <= 40 ? Buffer.from(value, 'base64url').toString() : '';
  const match = /^a(\d{1,15})$/.exec(decoded);
  if (!match) throw requestErrors.invalidArgument('The pageToken is not valid.');
  return match[1]!;
}
