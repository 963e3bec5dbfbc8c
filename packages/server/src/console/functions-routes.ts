/**
 * The console's view of the functions code base (--functions): its functions as the manifest
 * declares them, the worker (process, restarts, its last printed lines), trigger events waiting and
 * set aside (with their last error), the last deliveries; and putting a set-aside event back.
 *   GET  /hearth/v1/console/functions
 *   POST /hearth/v1/console/functions/events/{id}:requeue
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.js';
import type { FunctionsAssembly } from '../functions/functions-setup.js';
import type { TriggerEvent } from '../storage/trigger-events.js';
import { requireOperator } from './console-gate.js';
import { consolePrefix } from './session-routes.js';

export interface ConsoleFunctionsDeps {
  functions: FunctionsAssembly;
  isOwnerCredential(request: FastifyRequest): boolean;
}

/** An event as the console shows it: what and where, not the documents it carries. */
function eventView(event: TriggerEvent) {
  return { id: event.id, function: event.target, database: event.db, document: event.path, commitTime: new Date(event.commitTime / 1000).toISOString(), attempts: event.attempts, nextAt: new Date(event.nextAt).toISOString(), setAside: event.setAside, ...(event.lastError ? { lastError: event.lastError } : {}) };
}

export function registerConsoleFunctionsRoutes(app: FastifyInstance, deps: ConsoleFunctionsDeps): void {
  const { functions } = deps;
  app.get(`${consolePrefix}/functions`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const worker = functions.worker;
    const [counts, waiting, setAside] = await Promise.all([
      functions.eventCounts(),
      functions.triggerEvents.list({ setAside: false, limit: 100 }),
      functions.triggerEvents.list({ setAside: true, limit: 100 }),
    ]);
    return {
      codeBase: functions.summary,
      functions: functions.endpoints.map((endpoint) => ({ name: endpoint.name, platform: endpoint.platform, ...endpoint.kind, retry: endpoint.retry, region: endpoint.region, ...(endpoint.timeoutSeconds ? { timeoutSeconds: endpoint.timeoutSeconds } : {}) })),
      worker: worker ? { pid: worker.pid ?? null, starts: worker.starts, lines: worker.lines.slice(-200) } : null,
      events: { ...counts, waiting: waiting.map(eventView), setAside: setAside.map(eventView) },
      deliveries: functions.dispatcher ? functions.dispatcher.deliveries.slice(-100).reverse() : [],
    };
  });
  app.post(`${consolePrefix}/functions/events/:id`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const { id } = request.params as { id: string };
    const match = /^([0-9a-f-]{36}):requeue$/.exec(id);
    if (!match) throw new ApiError(404, `No route for POST ${request.url}.`, 'NOT_FOUND');
    if (!(await functions.triggerEvents.requeue(match[1]!, Date.now()))) throw new ApiError(404, `No set-aside event ${match[1]}.`, 'NOT_FOUND');
    functions.dispatcher?.noteRaised();
    return { requeued: match[1] };
  });
}
