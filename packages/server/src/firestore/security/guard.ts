import type { Logger } from 'pino';
import type { IdTokenClaims } from '../../auth/core/tokens.js';
import type { CommitAuthorizer, CommitPlan, DocumentDatabase, QueryAnswerCheck } from '../core/database.js';
import type { Doc } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { documentsRoot, type DatabaseId } from '../core/paths.js';
import { conjuncts, type Query } from '../core/query.js';
import { evaluateRules, type CompiledRules, type RulesAuth, type RulesDocumentReader, type RulesLookupBudget, type RulesRequest } from '../rules/index.js';
import { LookupCache } from './lookup-cache.js';
import type { RulesRegistry } from './rules-registry.js';

/** Who sends a Firestore request: the admin credential, a signed-in user, or nobody. */
export type FirestoreCaller = { kind: 'admin' } | { kind: 'user'; claims: IdTokenClaims } | { kind: 'anonymous' };

/** Google's document-lookup limits per request: 10 for one document or a query, 20 for batches and transactions. */
export const singleLookupLimit = 10;
export const batchLookupLimit = 20;

export interface GuardOptions {
  /** --dev: a database without rules is open to every caller, as in Google's emulator. */
  dev: boolean;
  logger: Logger;
}

/** What a request may do when no rules were released for its database. */
type Regime = { kind: 'bypass' } | { kind: 'open' } | { kind: 'closed' } | { kind: 'rules'; rules: CompiledRules };

/**
 * Security rules enforcement: every access a non-admin caller makes is judged by the rules in
 * force for the database. The admin credential bypasses them; without rules a database is closed
 * (production) or open (--dev). A denial answers PERMISSION_DENIED "Missing or insufficient
 * permissions." and the reason goes to the operator's log only.
 */
export class FirestoreGuard {
  private readonly lookups: LookupCache;

  constructor(
    private readonly registry: RulesRegistry,
    private readonly database: DocumentDatabase,
    private readonly options: GuardOptions,
  ) {
    this.lookups = new LookupCache(database);
  }

  /** Grows when rules are released: a decision made at an older value may not hold under the rules in force. */
  get rulesGeneration(): number {
    return this.registry.generation;
  }

  /** The judge of one caller's requests on one database. */
  judge(caller: FirestoreCaller, db: DatabaseId): RequestJudge {
    return new RequestJudge(this, caller, db);
  }

  async regime(caller: FirestoreCaller, db: DatabaseId): Promise<Regime> {
    if (caller.kind === 'admin') return { kind: 'bypass' };
    const rules = await this.registry.rulesFor(db);
    if (rules) return { kind: 'rules', rules };
    return { kind: this.options.dev ? 'open' : 'closed' };
  }

  /** Reads for get()/exists(): the stored documents (through the lookup cache), remembered for the request. */
  reader(db: DatabaseId, after?: ReadonlyMap<string, Doc | undefined>): RulesDocumentReader {
    const seen = new Map<string, Promise<Doc | undefined>>();
    const get = (path: string) => {
      let doc = seen.get(path);
      if (!doc) {
        doc = this.lookups.get(db, path);
        seen.set(path, doc);
      }
      return doc;
    };
    return { get, getAfter: (path) => (after?.has(path) ? Promise.resolve(after.get(path)) : get(path)) };
  }

  /** A document as it was at a past read time (the version a read at that time answers with). */
  async documentAt(db: DatabaseId, path: string, readTime: number): Promise<Doc | undefined> {
    return (await this.database.getDocuments(db, [path], { readTime })).get(path);
  }

  /** `quiet`: a decision that refuses nothing (what a Listen stream may send with a removal), so not logged as a denial. */
  async decide(caller: FirestoreCaller, rules: CompiledRules, request: RulesRequest, quiet = false): Promise<boolean> {
    let allowed: boolean;
    let reason: string;
    try {
      ({ allowed, reason } = await evaluateRules(rules, request));
    } catch (error) {
      // The evaluator's own failure denies, as any error in a rule does.
      this.options.logger.error({ err: error }, 'security rules evaluation failed');
      ({ allowed, reason } = { allowed: false, reason: 'evaluation failed' });
    }
    if (!allowed && !quiet) {
      this.options.logger.info(
        {
          project: request.db.projectId,
          database: request.db.databaseId,
          method: request.method,
          path: request.method === 'list' ? queryPath(request.query) : request.path,
          uid: caller.kind === 'user' ? caller.claims.sub : null,
          reason,
        },
        'security rules denied a request',
      );
    }
    return allowed;
  }
}

/**
 * One caller's requests against one database. Each method throws PERMISSION_DENIED unless every
 * access it is asked about is allowed.
 */
export class RequestJudge {
  constructor(
    private readonly guard: FirestoreGuard,
    readonly caller: FirestoreCaller,
    readonly db: DatabaseId,
  ) {}

  /** See FirestoreGuard.rulesGeneration. */
  get rulesGeneration(): number {
    return this.guard.rulesGeneration;
  }

  /** Requests that read or write nothing by themselves (begin/rollback, opening streams). */
  async ensureAccess(): Promise<void> {
    if ((await this.guard.regime(this.caller, this.db)).kind === 'closed') throw denied();
  }

  /**
   * Document reads (get, batchGet, documents targets): `get` on each, missing ones too. Resolves
   * to the documents the rules looked up (get()/exists()): a Listen target judged so is judged
   * again when one of them changes.
   */
  async get(paths: readonly string[], docs: ReadonlyMap<string, Doc>): Promise<ReadonlySet<string>> {
    const regime = await this.settled();
    if (!regime) return noLookups;
    const budget = newBudget(paths.length > 1 ? batchLookupLimit : singleLookupLimit);
    const reader = this.guard.reader(this.db);
    const time = nowMicros();
    for (const path of new Set(paths)) {
      const doc = docs.get(path);
      await this.require(regime, { db: this.db, method: 'get', path, auth: this.auth(), time, reader, budget, ...(doc ? { resource: doc } : {}) });
    }
    return budget.seen;
  }

  /**
   * Whether `get` allows this version of a document (undefined: absent) for the caller. Refuses
   * nothing and logs no denial: a Listen stream asks it to decide whether a document leaving a
   * target may go with its new content or only as a removal.
   */
  async mayGet(path: string, doc: Doc | undefined): Promise<boolean> {
    const regime = await this.guard.regime(this.caller, this.db);
    if (regime.kind !== 'rules') return regime.kind !== 'closed';
    const request: RulesRequest = { db: this.db, method: 'get', path, auth: this.auth(), time: nowMicros(), reader: this.guard.reader(this.db), budget: newBudget(singleLookupLimit) };
    return this.guard.decide(this.caller, regime.rules, doc ? { ...request, resource: doc } : request, true);
  }

  /**
   * Query targets of Listen: `list` on the query's constraints, as now; a query that names one
   * document is judged on that document: the stored one, or `named.version` (a Listen target
   * judges each version it would send). Resolves to the documents the rules looked up, as `get`.
   * Reads that answer documents use `query`.
   */
  async list(query: Query, named?: { version: Doc | undefined }): Promise<ReadonlySet<string>> {
    const regime = await this.settled();
    if (!regime) return noLookups;
    const namedPath = namedDocument(this.db, query);
    const resource = namedPath === undefined ? undefined : named ? named.version : await this.guard.reader(this.db).get(namedPath);
    const request = this.listRequest(query, namedPath, resource);
    await this.require(regime, request);
    return request.budget.seen;
  }

  /**
   * Queries (runQuery, aggregations, list calls, partitions, findNearest), before they run: `list`
   * on the query's constraints, which no version changes. A query that names one document is
   * judged on that document as the read sees it: at `readTime` when the read is at a past time
   * (or a read-only transaction's snapshot), else as stored now. The check returned judges the
   * answer's version of it again should it be another (a commit came between the two reads);
   * give it to the database, which runs it before anything is answered or locked.
   */
  async query(query: Query, readTime?: number): Promise<QueryAnswerCheck> {
    const regime = await this.settled();
    if (!regime) return nothingToCheck;
    const named = namedDocument(this.db, query);
    if (named === undefined) {
      await this.require(regime, this.listRequest(query));
      return nothingToCheck;
    }
    const judged = readTime === undefined ? await this.guard.reader(this.db).get(named) : await this.guard.documentAt(this.db, named, readTime);
    await this.require(regime, this.listRequest(query, named, judged));
    return async (docs) => {
      const found = docs.find((doc) => doc.key.path === named);
      if (found && found.updateTime !== judged?.updateTime) await this.require(regime, this.listRequest(query, named, found));
    };
  }

  private listRequest(query: Query, named?: string, resource?: Doc): RulesRequest & { budget: ReturnType<typeof newBudget> } {
    return {
      db: this.db,
      method: 'list',
      path: named ?? queryPath(query),
      query,
      ...(named === undefined ? {} : { namedDocument: true }),
      ...(resource ? { resource } : {}),
      auth: this.auth(),
      time: nowMicros(),
      reader: this.guard.reader(this.db),
      budget: newBudget(singleLookupLimit),
    };
  }

  /**
   * Commits: each written document once, as the plan's `create`, `update` or `delete`, with
   * `resource` the stored document and `request.resource` the document as the whole batch leaves
   * it; each verified document as a `get` of the stored one.
   */
  writes(options: { batch: boolean }): CommitAuthorizer | undefined {
    if (this.caller.kind === 'admin') return undefined;
    return async (plan: CommitPlan) => {
      const regime = await this.settled();
      if (!regime) return;
      const budget = newBudget(options.batch || plan.kinds.size + plan.verified.length > 1 ? batchLookupLimit : singleLookupLimit);
      const reader = this.guard.reader(this.db, plan.after);
      for (const [path, method] of plan.kinds) {
        const before = plan.stored.get(path);
        const after = plan.after.get(path);
        await this.require(regime, {
          db: this.db,
          method,
          path,
          auth: this.auth(),
          time: plan.requestTime,
          reader,
          budget,
          ...(before ? { resource: before } : {}),
          ...(after ? { requestResource: after } : {}),
        });
      }
      // A verify answers whether the document exists and its update time: a `get` of the stored
      // version, judged before its precondition is (Google's emulator does the same).
      for (const path of plan.verified) {
        const stored = plan.stored.get(path);
        await this.require(regime, { db: this.db, method: 'get', path, auth: this.auth(), time: plan.requestTime, reader, budget, ...(stored ? { resource: stored } : {}) });
      }
    };
  }

  /** Undefined when no rule needs evaluating (admin, or an open --dev database); throws when closed. */
  private async settled(): Promise<Extract<Regime, { kind: 'rules' }> | undefined> {
    const regime = await this.guard.regime(this.caller, this.db);
    if (regime.kind === 'closed') throw denied();
    return regime.kind === 'rules' ? regime : undefined;
  }

  private async require(regime: Extract<Regime, { kind: 'rules' }>, request: RulesRequest): Promise<void> {
    if (!(await this.guard.decide(this.caller, regime.rules, request))) throw denied();
  }

  private auth(): RulesAuth | null {
    if (this.caller.kind !== 'user') return null;
    return { uid: this.caller.claims.sub, token: this.caller.claims as Record<string, unknown> };
  }
}

/** The one document a query names by `__name__ ==` (or `in` with one name) among its conjuncts, if any. */
export function namedDocument(db: DatabaseId, query: Query): string | undefined {
  for (const filter of conjuncts(query.filter)) {
    if (filter.kind !== 'field' || !filter.field.isKey) continue;
    const value = filter.op === 'EQUAL' ? filter.value : filter.op === 'IN' && filter.value.type === 'array' && filter.value.values.length === 1 ? filter.value.values[0]! : undefined;
    if (value?.type !== 'reference') continue;
    const root = `${documentsRoot(db)}/`;
    if (value.value.startsWith(root)) return value.value.slice(root.length);
  }
  return undefined;
}

const nothingToCheck: QueryAnswerCheck = async () => {};

function denied() {
  return firestoreErrors.permissionDenied();
}

/** Reads judge get()/exists() only (getAfter is for writes), so a budget's keys are document paths. */
const noLookups: ReadonlySet<string> = new Set();

function newBudget(limit: number): RulesLookupBudget {
  return { limit, seen: new Set() };
}

function nowMicros(): number {
  return Date.now() * 1000;
}

function queryPath(query: Query | undefined): string {
  if (!query) return '';
  const scope = query.allDescendants ? `${query.parent}/**/${query.collectionId ?? '*'}` : `${query.parent ? `${query.parent}/` : ''}${query.collectionId ?? ''}`;
  return scope.replace(/^\//, '');
}
