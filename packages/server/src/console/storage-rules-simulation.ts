import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Doc } from '../firestore/core/documents.js';
import { firestoreErrors } from '../firestore/core/errors.js';
import { onlyKeys, wireObject } from '../firestore/core/wire-checks.js';
import { compileRules, evaluateStorageRules, RulesCompileError, type CompiledRules, type RulesMethod, type StorageObjectFields } from '../firestore/rules/index.js';
import type { RulesRegistry } from '../firestore/security/rules-registry.js';
import { isBucketName, objectNameProblem } from '../files/core/object-names.js';
import { rulesFields } from '../files/security/rules-guard.js';
import type { StoredObject } from '../storage/files-store.js';
import { requireOperator } from './console-gate.js';
import { authOf, type CheckAnswer, type SimulationAnswer } from './rules-simulation.js';
import { consolePrefix } from './session-routes.js';

export interface StorageSimulationDeps {
  registry: RulesRegistry;
  /** The stored object (`resource` unless the operator gives one). */
  readObject(bucket: string, name: string): Promise<StoredObject | undefined>;
  /** A document of the project, for `firestore.get()` / `exists()`. */
  readDocument(projectId: string, databaseId: string, path: string): Promise<Doc | undefined>;
  /** --dev: a bucket without storage rules is open, as the storage guard enforces it. */
  dev: boolean;
  isOwnerCredential(request: FastifyRequest): boolean;
}

const methods: readonly RulesMethod[] = ['get', 'list', 'create', 'update', 'delete'];
/** Google's lookup limit per storage request (files/security/rules-guard.ts). */
const lookupLimit = 10;
const bodyLimit = 600 * 1024;
const maxMetadataBytes = 16 * 1024;

/**
 * `POST /hearth/v1/console/projects/{p}/storage/rules:check` and `.../rules:simulate`: the console's
 * storage rules editor and playground, on the same engine as the storage guard (Firestore's are in
 * rules-routes.ts). A simulation judges one made-up request against unsaved source or the rules in
 * force for its bucket, with the stored object as `resource` unless the operator describes one.
 */
export function registerConsoleStorageRules(app: FastifyInstance, deps: StorageSimulationDeps): void {
  const base = `${consolePrefix}/projects/:project/storage`;
  app.post(`${base}/rules::check`, { bodyLimit }, async (request): Promise<CheckAnswer> => {
    requireOperator(request, deps.isOwnerCredential);
    const wire = wireObject(request.body, 'body');
    onlyKeys(wire, ['source'], 'body');
    return { issues: compiled(sourceOf(wire.source)).issues };
  });
  app.post(`${base}/rules::simulate`, { bodyLimit }, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const { project } = request.params as { project: string };
    return simulateStorageRules(deps, project, request.body);
  });
}

export async function simulateStorageRules(deps: StorageSimulationDeps, projectId: string, body: unknown): Promise<SimulationAnswer> {
  const wire = wireObject(body, 'body');
  onlyKeys(wire, ['source', 'bucket', 'method', 'path', 'auth', 'resource', 'request'], 'body');
  if (typeof wire.bucket !== 'string' || !isBucketName(wire.bucket)) throw firestoreErrors.invalidArgument('bucket must be a bucket name, like my-project.appspot.com.');
  const bucket = wire.bucket;
  if (typeof wire.method !== 'string' || !methods.includes(wire.method as RulesMethod)) throw firestoreErrors.invalidArgument(`method must be one of ${methods.join(', ')}.`);
  const method = wire.method as RulesMethod;
  if (typeof wire.path !== 'string') throw firestoreErrors.invalidArgument('path must name an object (or a folder, for list).');
  // A folder is judged without its trailing slash ('' is the bucket's root), as the guard does.
  const path = method === 'list' ? wire.path.replace(/^\/+/, '').replace(/\/+$/, '') : wire.path.replace(/^\/+/, '');
  const problem = method === 'list' ? undefined : objectNameProblem(path);
  if (problem) throw firestoreErrors.invalidArgument(problem);
  const auth = authOf(wire.auth);
  if (wire.request !== undefined && method !== 'create' && method !== 'update') throw firestoreErrors.invalidArgument('request is for create and update only.');

  let rules: CompiledRules | undefined;
  if (wire.source !== undefined) {
    const outcome = compiled(sourceOf(wire.source));
    if (!outcome.rules) return { allowed: false, issues: outcome.issues, error: 'The rules do not compile.' };
    rules = outcome.rules;
  } else {
    rules = await deps.registry.storageRulesFor(projectId, bucket);
    if (!rules) {
      return deps.dev
        ? { allowed: true, error: 'No storage rules are released for this bucket: in --dev it is open to every caller.' }
        : { allowed: false, error: 'No storage rules are released for this bucket: it is closed to all but the administrator.' };
    }
  }

  const now = Date.now();
  const stored = method === 'list' ? undefined : await deps.readObject(bucket, path);
  const blank: StorageObjectFields = { name: path, bucket, generation: '0', metageneration: 1, size: 0, timeCreated: now, updated: now, md5Hash: '', crc32c: '', etag: '', metadata: {} };
  const storedFields = stored ? rulesFields(stored) : undefined;
  const resource = wire.resource === null ? undefined : wire.resource !== undefined ? described(wire.resource, 'resource', storedFields ?? blank) : storedFields;
  const requestResource = method === 'create' || method === 'update' ? described(wire.request ?? {}, 'request', method === 'update' && resource ? resource : blank) : undefined;
  try {
    const decision = await evaluateStorageRules(rules, {
      projectId,
      bucket,
      method,
      path,
      auth,
      time: now * 1000,
      ...(resource && method !== 'create' && method !== 'list' ? { resource } : {}),
      ...(requestResource ? { requestResource } : {}),
      firestore: { get: (databaseId, documentPath) => deps.readDocument(projectId, databaseId, documentPath) },
      budget: { limit: lookupLimit, seen: new Set() },
    });
    return { allowed: decision.allowed, reason: decision.reason, ...(decision.decidedBy ? { decidedBy: decision.decidedBy } : {}) };
  } catch {
    return { allowed: false, error: 'The rules engine failed on this request; the guard would deny it.' };
  }
}

/** The fields the operator describes (`size`, `contentType`, `metadata`) over a base object. */
function described(raw: unknown, what: string, base: StorageObjectFields): StorageObjectFields {
  const wire = wireObject(raw, what);
  onlyKeys(wire, ['size', 'contentType', 'metadata'], what);
  const next: StorageObjectFields = { ...base };
  if (wire.size !== undefined) {
    if (typeof wire.size !== 'number' || !Number.isSafeInteger(wire.size) || wire.size < 0) throw firestoreErrors.invalidArgument(`${what}.size must be a whole number of bytes.`);
    next.size = wire.size;
  }
  if (wire.contentType !== undefined) {
    if (typeof wire.contentType !== 'string') throw firestoreErrors.invalidArgument(`${what}.contentType must be a string.`);
    next.contentType = wire.contentType;
  }
  if (wire.metadata !== undefined) {
    const metadata = wireObject(wire.metadata, `${what}.metadata`);
    if (Buffer.byteLength(JSON.stringify(metadata)) > maxMetadataBytes) throw firestoreErrors.invalidArgument(`${what}.metadata is larger than 16 KiB.`);
    if (Object.values(metadata).some((value) => typeof value !== 'string')) throw firestoreErrors.invalidArgument(`${what}.metadata values must be strings.`);
    next.metadata = metadata as Record<string, string>;
  }
  return next;
}

function compiled(source: string): { rules?: CompiledRules; issues: CheckAnswer['issues'] } {
  try {
    const rules = compileRules(source, 'storage.rules', 'firebase.storage');
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
