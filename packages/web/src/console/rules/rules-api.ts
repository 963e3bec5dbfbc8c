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

/** Which rules the page edits: the document database's or Cloud Storage's. */
export type RulesKind = 'firestore' | 'storage';

/** Each kind's project-wide release (every database, or every bucket, falls back to it), file name and service. */
export const rulesKinds: Record<RulesKind, { release: string; fileName: string; service: RegExp }> = {
  firestore: { release: 'cloud.firestore', fileName: 'firestore.rules', service: /service\s+cloud\.firestore/ },
  storage: { release: 'firebase.storage', fileName: 'storage.rules', service: /service\s+firebase\.storage/ },
};

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

export async function currentRelease(projectId: string, kind: RulesKind = 'firestore'): Promise<Release | null> {
  try {
    return await consoleRequest<Release>(rulesApiPath(projectId, `releases/${rulesKinds[kind].release}`));
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
export async function release(projectId: string, rulesetName: string, kind: RulesKind = 'firestore'): Promise<void> {
  const name = rulesKinds[kind].release;
  const body = { name: `projects/${projectId}/releases/${name}`, rulesetName };
  if (await currentRelease(projectId, kind)) await consoleRequest(rulesApiPath(projectId, `releases/${name}`), { method: 'PATCH', body: { release: body } });
  else await consoleRequest(rulesApiPath(projectId, 'releases'), { body });
}

/** Saves the source as a new ruleset and releases it. */
export async function deploy(projectId: string, content: string, kind: RulesKind = 'firestore'): Promise<Ruleset> {
  const ruleset = await consoleRequest<Ruleset>(rulesApiPath(projectId, 'rulesets'), { body: { source: { files: [{ name: rulesKinds[kind].fileName, content }] } } });
  await release(projectId, ruleset.name, kind);
  return ruleset;
}

export function rulesSourceOf(ruleset: Ruleset, kind: RulesKind = 'firestore'): string {
  const files = ruleset.source?.files ?? [];
  return (files.find((file) => rulesKinds[kind].service.test(file.content)) ?? files[0])?.content ?? '';
}

/**
 * The project's rulesets of one kind, newest first. The Rules API lists rulesets without their
 * source, so each is read to tell a storage ruleset from a Firestore one (at most 50).
 */
export async function listRulesetsOf(projectId: string, kind: RulesKind): Promise<Ruleset[]> {
  const listed = await listRulesets(projectId);
  const read = await Promise.all(listed.map((ruleset) => getRuleset(projectId, ruleset.name)));
  return read.filter((ruleset) => (ruleset.source?.files ?? []).some((file) => rulesKinds[kind].service.test(file.content)));
}

export async function checkStorageRules(projectId: string, source: string): Promise<RulesIssue[]> {
  const answer = await consoleRequest<{ issues?: RulesIssue[] }>(consolePath(`projects/${encodeURIComponent(projectId)}/storage/rules:check`), { body: { source } });
  return answer.issues ?? [];
}

/** An object as the storage playground describes it (`resource` or `request.resource`). */
export interface StorageObjectShape {
  size?: number;
  contentType?: string;
  metadata?: Record<string, string>;
}

export interface StorageSimulateRequest {
  source?: string;
  bucket: string;
  method: SimulateRequest['method'];
  /** An object's name, or a folder for list. */
  path: string;
  auth: SimulateRequest['auth'];
  /** Omitted: the stored object; null: none. */
  resource?: StorageObjectShape | null;
  /** For create and update: the object the write would leave. */
  request?: StorageObjectShape;
}

export function simulateStorage(projectId: string, request: StorageSimulateRequest): Promise<SimulateAnswer> {
  return consoleRequest<SimulateAnswer>(consolePath(`projects/${encodeURIComponent(projectId)}/storage/rules:simulate`), { body: request });
}
