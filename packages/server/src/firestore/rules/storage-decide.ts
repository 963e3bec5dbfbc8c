import type { Doc } from '../core/documents.js';
import type { CompiledRules } from './compile.js';
import { fromJson, resourceOf } from './convert.js';
import { judge, NeedLookup, type JudgeContext, type Target } from './decide.js';
import type { LookupKind } from './evaluate.js';
import { matchPattern } from './matching.js';
import type { RulesAuth, RulesDecision, RulesLookupBudget, RulesMethod } from './types.js';
import { describeValue, fault, LazyMap, RulesMap, RulesPath, RulesTimestamp, type RulesValue } from './values.js';

/**
 * Storage security rules (`service firebase.storage`) on the same language: paths are
 * `/b/{bucket}/o/{object path...}`, `resource` and `request.resource` are object metadata (name,
 * bucket, size, contentType, metadata, hashes, times), and `firestore.get()` / `firestore.exists()`
 * read the project's documents across services. `list` needs rules_version 2 (Google refuses it
 * under version 1) and is judged on the listed prefix, as Google's emulator does.
 */

/** An object's metadata as storage rules see it. */
export interface StorageObjectFields {
  name: string;
  bucket: string;
  generation: string;
  metageneration: number;
  size: number;
  /** Milliseconds since the epoch. */
  timeCreated: number;
  updated: number;
  md5Hash: string;
  crc32c: string;
  etag: string;
  contentType?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  metadata: Readonly<Record<string, string>>;
}

/** The project's documents, for `firestore.get()` / `exists()`: a database id and a path relative to its `documents`. */
export interface FirestoreDocumentReader {
  get(databaseId: string, path: string): Promise<Doc | undefined>;
}

export interface StorageRulesRequest {
  projectId: string;
  bucket: string;
  method: RulesMethod;
  /** The object's name; for list, the listed prefix without its trailing slash ('' for the root). */
  path: string;
  auth: RulesAuth | null;
  /** Microseconds since the epoch. */
  time: number;
  resource?: StorageObjectFields;
  requestResource?: StorageObjectFields;
  firestore: FirestoreDocumentReader;
  budget: RulesLookupBudget;
}

export async function evaluateStorageRules(rules: CompiledRules, request: StorageRulesRequest, options: { debug?: (text: string) => void } = {}): Promise<RulesDecision> {
  if (rules.service !== 'firebase.storage') return { allowed: false, reason: 'The ruleset is not a storage ruleset.' };
  if (request.method === 'list' && rules.version !== '2') return { allowed: false, reason: "List operations are only allowed for rules_version='2'." };
  const lookups = new Map<string, Doc | null>();
  for (;;) {
    try {
      return decideStorage(rules, request, lookups, options);
    } catch (error) {
      if (!(error instanceof NeedLookup)) throw error;
      const [databaseId, ...relative] = error.path.split('\u0000');
      request.budget.seen.add(error.key);
      lookups.set(error.key, (await request.firestore.get(databaseId!, relative.join('\u0000'))) ?? null);
    }
  }
}

class StorageContext implements JudgeContext {
  readonly request: RulesValue;
  resource: RulesValue = null;
  wildcards: readonly RulesValue[] = [];
  readonly debug?: (value: RulesValue) => void;

  constructor(
    private readonly storageRequest: StorageRulesRequest,
    private readonly lookups: Map<string, Doc | null>,
    hook: ((text: string) => void) | undefined,
  ) {
    this.request = requestValue(storageRequest);
    if (hook) this.debug = (value) => hook(describeValue(value));
  }

  lookup(kind: LookupKind, path: RulesValue): RulesValue {
    if (kind !== 'get' && kind !== 'exists') throw fault(`Function not found error: Name: [${kind}].`);
    if (!(path instanceof RulesPath)) throw fault(`Unsupported operation error. Received: firestore.${kind}(${path === null ? 'null' : typeof path}). Expected: firestore.${kind}(path).`);
    const [databases, databaseId, documents, ...relative] = path.segments;
    if (databases !== 'databases' || databaseId === undefined || documents !== 'documents' || relative.length === 0 || relative.length % 2 !== 0) {
      throw fault(`Invalid document path: ${path.toString()}.`);
    }
    const key = `${databaseId}\u0000${relative.join('/')}`;
    const cached = this.lookups.get(key);
    if (cached === undefined) {
      const { budget } = this.storageRequest;
      if (!budget.seen.has(key) && budget.seen.size >= budget.limit) throw fault(`Exceeded the limit of ${budget.limit} document lookups (firestore.get, firestore.exists) for this request.`);
      throw new NeedLookup(key, key, false);
    }
    if (kind === 'exists') return cached !== null;
    return cached === null ? null : resourceOf({ projectId: this.storageRequest.projectId, databaseId }, cached);
  }
}

function decideStorage(rules: CompiledRules, request: StorageRulesRequest, lookups: Map<string, Doc | null>, options: { debug?: (text: string) => void }): RulesDecision {
  const ctx = new StorageContext(request, lookups, options.debug);
  const segments = ['b', request.bucket, 'o', ...(request.path === '' ? [] : request.path.split('/'))];
  const target: Target = { matches: [], resource: request.resource ? objectValue(request.resource) : null };
  for (const match of rules.index.candidates(segments[3])) {
    const wildcards = matchPattern(match.pattern, segments, rules.version);
    if (wildcards) target.matches.push({ match, wildcards });
  }
  const failures: string[] = [];
  const allowedBy = judge(target, request, ctx, failures);
  if (!allowedBy) return { allowed: false, reason: failures.length ? failures.join(', ') : 'No matching allow statements' };
  return { allowed: true, reason: `allowed by '${request.method}' @ L${allowedBy.line}`, decidedBy: allowedBy.explanation };
}

const requestKeys = ['auth', 'method', 'path', 'time', 'resource'];

function requestValue(request: StorageRulesRequest): RulesMap {
  return new LazyMap(requestKeys, (key) => {
    switch (key) {
      case 'auth':
        return request.auth ? new RulesMap(new Map<string, RulesValue>([['uid', request.auth.uid], ['token', fromJson(request.auth.token)]])) : null;
      case 'method':
        return request.method;
      case 'path':
        return new RulesPath(['b', request.bucket, 'o', ...(request.path === '' ? [] : request.path.split('/'))]);
      case 'time':
        return new RulesTimestamp(BigInt(request.time) * 1000n);
      case 'resource':
        return request.requestResource ? objectValue(request.requestResource) : null;
    }
    return undefined;
  });
}

/** An object's metadata as a rules map; unset optional fields read as null. */
function objectValue(object: StorageObjectFields): RulesMap {
  const text = (value: string | undefined): RulesValue => value ?? null;
  return new RulesMap(
    new Map<string, RulesValue>([
      ['name', object.name],
      ['bucket', object.bucket],
      ['generation', BigInt(object.generation)],
      ['metageneration', BigInt(object.metageneration)],
      ['size', BigInt(object.size)],
      ['timeCreated', new RulesTimestamp(BigInt(object.timeCreated) * 1_000_000n)],
      ['updated', new RulesTimestamp(BigInt(object.updated) * 1_000_000n)],
      ['md5Hash', object.md5Hash],
      ['crc32c', object.crc32c],
      ['etag', object.etag],
      ['contentType', text(object.contentType)],
      ['contentEncoding', text(object.contentEncoding)],
      ['contentDisposition', text(object.contentDisposition)],
      ['contentLanguage', text(object.contentLanguage)],
      ['cacheControl', text(object.cacheControl)],
      ['metadata', new RulesMap(new Map(Object.entries(object.metadata)))],
    ]),
  );
}
