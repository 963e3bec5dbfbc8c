import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestErrors } from '../http/api-error.js';
import { metricsRegistry } from '../http/metrics.js';
import { requireOperator } from './console-gate.js';
import type { MetricsSampler } from './metrics-sampler.js';
import { consolePrefix } from './session-routes.js';

export interface MetricsRouteDeps {
  sampler: MetricsSampler;
  isOwnerCredential(request: FastifyRequest): boolean;
}

/** `GET /metrics` (Prometheus text) and `GET /hearth/v1/console/metrics?since=` (the sampled series). */
export function registerMetricsRoutes(app: FastifyInstance, deps: MetricsRouteDeps): void {
  app.get('/metrics', async (request, reply) => {
    requireOperator(request, deps.isOwnerCredential);
    const text = await metricsRegistry.metrics();
    void reply.type(metricsRegistry.contentType).header('cache-control', 'no-store');
    return text;
  });

  app.get(`${consolePrefix}/metrics`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const query = request.query as Record<string, unknown>;
    for (const name of Object.keys(query)) if (name !== 'since') throw requestErrors.invalidArgument(`Unknown query parameter "${name.slice(0, 40)}".`);
    const since = query.since === undefined ? 0 : sinceOf(query.since);
    return { intervalMs: deps.sampler.intervalMs, samples: deps.sampler.since(since) };
  });
}

function sinceOf(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw requestErrors.invalidArgument('since must be milliseconds since the epoch.');
  return Number(value);
}
