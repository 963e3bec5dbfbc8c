import type { Doc } from '../core/documents.js';
import type { Query } from '../core/query.js';
import type { CompiledRules } from './compile.js';
import { documentPath, fromJson, resourceOf } from './convert.js';
import { evaluate, type EvalContext, type LookupKind } from './evaluate.js';
import { matchGroupPattern, matchPattern, methodBit, unknownSegment, type CompiledAllow, type CompiledMatch, type PathSegment } from './matching.js';
import { scenariosOf, type Scenario } from './symbolic.js';
import type { RulesDecision, RulesRequest } from './types.js';
import { describeValue, fault, LazyMap, RulesFault, RulesMap, RulesPath, RulesTimestamp, type RulesValue } from './values.js';

/**
 * Judges one access: finds the match blocks whose pattern covers the path, and the allow
 * statements of those blocks that grant the method; any true condition allows (they OR
 * together). A condition that errors counts as false. The reason follows the emulator:
 * `false for 'get' @ L6, Null value error. for 'get' @ L9`, or `No matching allow statements`.
 */
export interface EvaluateOptions {
  /** Receives what `debug(x)` is given, as text (the emulator writes it to its log). */
  debug?: (text: string) => void;
}

export async function evaluateRules(rules: CompiledRules, request: RulesRequest, options: EvaluateOptions = {}): Promise<RulesDecision> {
  const lookups = new Map<string, Doc | null>();
  for (;;) {
    try {
      return decide(rules, request, lookups, options);
    } catch (error) {
      if (!(error instanceof NeedLookup)) throw error;
      // A get()/exists() that was not cached yet: fetch it and judge again from the start.
      const doc = error.after ? await request.reader.getAfter(error.path) : await request.reader.get(error.path);
      request.budget.seen.add(error.key);
      lookups.set(error.key, doc ?? null);
    }
  }
}

export class NeedLookup {
  constructor(
    readonly key: string,
    readonly path: string,
    readonly after: boolean,
  ) {}
}

export interface Target {
  /** Wildcard values of each applicable match block. */
  matches: { match: CompiledMatch; wildcards: RulesValue[] }[];
  resource: RulesValue;
}

/** One per judgement, reused for every allow (only resource and wildcards change), so evaluating allocates no context. */
class RequestContext implements EvalContext {
  readonly request: RulesValue;
  resource: RulesValue = null;
  wildcards: readonly RulesValue[] = [];
  readonly debug?: (value: RulesValue) => void;
  constructor(
    private readonly rulesRequest: RulesRequest,
    private readonly lookups: Map<string, Doc | null>,
    options: EvaluateOptions,
  ) {
    this.request = requestValue(rulesRequest);
    const hook = options.debug;
    if (hook) this.debug = (value) => hook(describeValue(value));
  }
  lookup(kind: LookupKind, path: RulesValue): RulesValue {
    return lookup(this.rulesRequest, this.lookups, kind, path);
  }
}

function decide(rules: CompiledRules, request: RulesRequest, lookups: Map<string, Doc | null>, options: EvaluateOptions): RulesDecision {
  const ctx = new RequestContext(request, lookups, options);
  const targets = request.method === 'list' && !request.namedDocument ? listTargets(rules, request) : [documentTarget(rules, request)];
  if (!targets) return { allowed: false, reason: 'The query has too many disjunctions to judge.' };
  const failures: string[] = [];
  let allowedBy: CompiledAllow | undefined;
  for (const target of targets) {
    allowedBy = judge(target, request, ctx, failures);
    if (allowedBy === undefined) return { allowed: false, reason: failures.length ? failures.join(', ') : 'No matching allow statements' };
  }
  // No scenario at all (nothing to judge) allows without a statement, as before.
  if (!allowedBy) return { allowed: true, reason: '' };
  return { allowed: true, reason: `allowed by '${request.method}' @ L${allowedBy.line}`, decidedBy: allowedBy.explanation };
}

/** What judging sets per target: the resource and the matched wildcards (one object reused, so nothing is allocated). */
export interface JudgeContext extends EvalContext {
  resource: RulesValue;
  wildcards: readonly RulesValue[];
}

/** The first allow that grants the target, or undefined (failures explain why). */
export function judge(target: Target, request: Pick<RulesRequest, 'method'>, ctx: JudgeContext, failures: string[]): CompiledAllow | undefined {
  const bit = methodBit(request.method);
  ctx.resource = target.resource;
  for (const { match, wildcards } of target.matches) {
    for (const allow of match.allows) {
      if (!(allow.methods & bit)) continue;
      if (!allow.condition) return allow;
      ctx.wildcards = wildcards;
      let result: RulesValue;
      try {
        result = evaluate(allow.condition, ctx);
      } catch (error) {
        if (!(error instanceof RulesFault)) throw error;
        failures.push(`${error.message} for '${request.method}' @ L${allow.line}`);
        continue;
      }
      if (result === true) return allow;
      failures.push(`${typeof result === 'boolean' ? result : 'Invalid type. Permission statements expect a boolean value.'} for '${request.method}' @ L${allow.line}`);
    }
  }
  return undefined;
}

function documentTarget(rules: CompiledRules, request: RulesRequest): Target {
  const relative = request.path.split('/');
  const segments = ['databases', request.db.databaseId, 'documents', ...relative];
  const matches: Target['matches'] = [];
  for (const match of rules.index.candidates(relative[0])) {
    const wildcards = matchPattern(match.pattern, segments, rules.version);
    if (wildcards) matches.push({ match, wildcards });
  }
  return { matches, resource: request.resource ? resourceOf(request.db, request.resource) : null };
}

/** One target per scenario of the query (see symbolic.ts); undefined when there are too many. */
function listTargets(rules: CompiledRules, request: RulesRequest): Target[] | undefined {
  const query = request.query;
  if (!query) throw new Error('a list request needs its query');
  const scenarios = scenariosOf(request.db, query);
  return scenarios?.map((scenario) => listTarget(rules, request, query, scenario));
}

function listTarget(rules: CompiledRules, request: RulesRequest, query: Query, scenario: Scenario): Target {
  const parent = query.parent === '' ? [] : query.parent.split('/');
  const prefix = ['databases', request.db.databaseId, 'documents', ...parent];
  const collectionId = query.collectionId ?? '';
  const fixed = scenario.documentPath?.split('/');
  const matches: Target['matches'] = [];
  const resource = new RulesMap(new Map([['data', scenario.data]]));
  for (const match of rules.index.candidates(query.allDescendants ? undefined : (parent[0] ?? collectionId))) {
    let wildcards: RulesValue[] | undefined;
    if (query.allDescendants) wildcards = matchGroupPattern(match.pattern, prefix, collectionId);
    else {
      // A query that fixes `__name__ ==` names its document, so the id wildcard is known.
      const fixedHere = fixed && fixed.length === parent.length + 2 && fixed[fixed.length - 2] === collectionId;
      const path: PathSegment[] = fixedHere ? ['databases', request.db.databaseId, 'documents', ...fixed] : [...prefix, collectionId, unknownSegment];
      wildcards = matchPattern(match.pattern, path, rules.version);
    }
    if (wildcards) matches.push({ match, wildcards });
  }
  return { matches, resource };
}

const requestKeys = ['auth', 'method', 'path', 'time', 'resource', 'query'];
const authKeys = ['uid', 'token'];

/** The token's claims are converted only if a rule reads them. */
function authValue(auth: NonNullable<RulesRequest['auth']>): RulesMap {
  return new LazyMap(authKeys, (key) => (key === 'uid' ? auth.uid : fromJson(auth.token)));
}

function requestValue(request: RulesRequest): RulesMap {
  return new LazyMap(requestKeys, (key) => {
    switch (key) {
      case 'auth':
        return request.auth ? authValue(request.auth) : null;
      case 'method':
        return request.method;
      case 'path': {
        const query = request.query;
        if (request.method !== 'list' || !query) return documentPath(request.db, request.path);
        return documentPath(request.db, query.parent === '' ? query.collectionId ?? '' : `${query.parent}/${query.collectionId ?? ''}`);
      }
      case 'time':
        return new RulesTimestamp(BigInt(request.time) * 1000n);
      case 'resource':
        return request.requestResource ? resourceOf(request.db, request.requestResource) : undefined;
      case 'query':
        return request.query ? queryValue(request.query) : undefined;
    }
    return undefined;
  });
}

/**
 * `request.query`: the emulator gives `limit` null when the query has none, `offset` 0, and
 * `orderBy` a map of field path to 'ASC' / 'DESC'. Hearth's query is normalized, so the implicit
 * `__name__` order is left out.
 */
function queryValue(query: Query): RulesMap {
  const orderBy = new Map<string, RulesValue>();
  for (const order of query.orderBy) if (!order.field.isKey) orderBy.set(order.field.path, order.descending ? 'DESC' : 'ASC');
  return new RulesMap(
    new Map<string, RulesValue>([
      ['limit', query.limit === undefined ? null : BigInt(query.limit)],
      ['offset', BigInt(query.offset)],
      ['orderBy', new RulesMap(orderBy)],
    ]),
  );
}

function lookup(request: RulesRequest, lookups: Map<string, Doc | null>, kind: LookupKind, path: RulesValue): RulesValue {
  if (!(path instanceof RulesPath)) throw fault(`Unsupported operation error. Received: ${kind}(${path === null ? 'null' : typeof path}). Expected: ${kind}(path).`);
  const [databases, databaseId, documents, ...relative] = path.segments;
  if (databases !== 'databases' || documents !== 'documents' || relative.length === 0 || relative.length % 2 !== 0) {
    throw fault(`Invalid document path: ${path.toString()}.`);
  }
  if (databaseId !== request.db.databaseId) throw fault(`Cross-database lookups are not supported: ${path.toString()}.`);
  const after = kind === 'getAfter' || kind === 'existsAfter';
  const relativePath = relative.join('/');
  const key = after ? `after:${relativePath}` : relativePath;
  const cached = lookups.get(key);
  if (cached === undefined) {
    const { budget } = request;
    if (!budget.seen.has(key) && budget.seen.size >= budget.limit) {
      throw fault(`Exceeded the limit of ${budget.limit} document lookups (get, exists, getAfter, existsAfter) for this request.`);
    }
    throw new NeedLookup(key, relativePath, after);
  }
  if (kind === 'exists' || kind === 'existsAfter') return cached !== null;
  return cached === null ? null : resourceOf(request.db, cached);
}
