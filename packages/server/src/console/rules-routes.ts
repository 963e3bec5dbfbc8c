import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkDatabase } from '../firestore/core/paths.js';
import { requireOperator } from './console-gate.js';
import { checkRules, simulateRules, type SimulationDeps } from './rules-simulation.js';
import { consolePrefix } from './session-routes.js';

export interface ConsoleRulesDeps extends SimulationDeps {
  isOwnerCredential(request: FastifyRequest): boolean;
}

/** A ruleset is at most 256 KiB; its JSON escaping can double that. */
const bodyLimit = 600 * 1024;

/** `POST .../rules:check` and `.../rules:simulate` for the console's editor and playground. */
export function registerConsoleRulesRoutes(app: FastifyInstance, deps: ConsoleRulesDeps): void {
  const base = `${consolePrefix}/projects/:project/databases/:database`;
  const dbOf = (request: FastifyRequest) => {
    const { project, database } = request.params as { project: string; database: string };
    return checkDatabase(project, database);
  };
  app.post(`${base}/rules::check`, { bodyLimit }, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    dbOf(request);
    return checkRules(request.body);
  });
  app.post(`${base}/rules::simulate`, { bodyLimit }, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    return simulateRules(deps, dbOf(request), request.body);
  });
}
