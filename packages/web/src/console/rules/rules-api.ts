import { ConsoleApiError, consolePath, consoleRequest, rulesApiPath } from '../api';

export interface RulesIssue {
  line: number;
  column: number;
  message: string;
  severity: string;
}

export interface Ruleset {
  name: string;
  createTime: string;
  source?: { files: { name: string; content: string }[] };
}

export interface Release {
  name: string;
  rulesetName: string;
  updateTime: string;
}

/** The project-wide release every database falls back to. */
export const releaseName = 'cloud.firestore';

function databasePath(projectId: string, databaseId: string, verb: string): string {
  return consolePath(`projects/${encodeURIComponent(projectId)}/databases/${encodeURIComponent(databaseId)}/${verb}`);
}

export async function checkRules(projectId: string, databaseId: string, source: string): Promise<RulesIssue[]> {
  const answer = await consoleRequest<{ issues?: RulesIssue[] }>(databasePath(projectId, databaseId, 'rules:check'), { body: { source } });
  return answer.issues ?? [];
}

export interface SimulateRequest {
  source?: string;
  method: 'get' | 'list' | 'create' | 'update' | 'delete';
  path: string;
  auth: { uid: string; token: Record<string, unknown> } | null;
  data?: Record<string, unknown>;
  existing?: Record<string, unknown>;
  query?: { where?: unknown[]; orderBy?: unknown[]; limit?: number };
}

export interface SimulateAnswer {
  allowed: boolean;
  /** Hearth's one-line account of the decision (e.g. why a condition failed). */
  reason?: string;
  decidedBy?: { line: number; column: number; match: string; condition: string };
  issues?: RulesIssue[];
  error?: string;
}

export function simulate(projectId: string, databaseId: string, request: SimulateRequest): Promise<SimulateAnswer> {
  return consoleRequest<SimulateAnswer>(databasePath(projectId, databaseId, 'rules:simulate'), { body: request });
}

export async function currentRelease(projectId: string): Promise<Release | null> {
  try {
    return await consoleRequest<Release>(rulesApiPath(projectId, `releases/${releaseName}`));
  } catch (error) {
    if (error instanceof ConsoleApiError && error.status === 404) return null;
    throw error;
  }
}

export async function listRulesets(projectId: string): Promise<Ruleset[]> {
  const answer = await consoleRequest<{ rulesets?: Ruleset[] }>(rulesApiPath(projectId, 'rulesets?pageSize=50'));
  return answer.rulesets ?? [];
}

export function getRuleset(projectId: string, rulesetName: string): Promise<Ruleset> {
  return consoleRequest<Ruleset>(`/firebaserules.googleapis.com/v1/${rulesetName}`);
}

/** Points the release at a ruleset (creating the release the first time). */
export async function release(projectId: string, rulesetName: string): Promise<void> {
  const body = { name: `projects/${projectId}/releases/${releaseName}`, rulesetName };
  if (await currentRelease(projectId)) await consoleRequest(rulesApiPath(projectId, `releases/${releaseName}`), { method: 'PATCH', body: { release: body } });
  else await consoleRequest(rulesApiPath(projectId, 'releases'), { body });
}

/** Saves the source as a new ruleset and releases it. */
export async function deploy(projectId: string, content: string): Promise<Ruleset> {
  const ruleset = await consoleRequest<Ruleset>(rulesApiPath(projectId, 'rulesets'), { body: { source: { files: [{ name: 'firestore.rules', content }] } } });
  await release(projectId, ruleset.name);
  return ruleset;
}

export function rulesSourceOf(ruleset: Ruleset): string {
  const files = ruleset.source?.files ?? [];
  return (files.find((file) => /service\s+cloud\.firestore/.test(file.content)) ?? files[0])?.content ?? '';
}
