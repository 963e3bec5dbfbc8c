/**
 * The judge of the rules invariant checked before it is trusted: on every document of a round (as seeded, and as
 * the writes leave it; a document never written too), for every caller, its get and list verdicts are compared
 * with Google's emulator (a GET, and a query naming the document: the emulator judges `list` on it) and with
 * Hearth's own evaluator (firestore/rules, called directly with the same document and claims), and its get
 * verdict with the emulator's answer to a `verify` write (Firestore judges verify as a get).
 */
import { fieldsFromWire } from '../../packages/server/src/firestore/core/value-wire.js';
import { documentKey, type DatabaseId } from '../../packages/server/src/firestore/core/paths.js';
import { parseStructuredQuery } from '../../packages/server/src/firestore/core/query-parse.js';
import { compileRules, evaluateRules, type CompiledRules, type RulesAuth } from '../../packages/server/src/firestore/rules/index.js';
import { postJson } from './hearth.js';
import { judgeMissingAware } from './invariant-reads.js';
import { judge, rulesSource } from './invariant-rules.js';
import { authorizationOf, databaseName, documentName, type InvariantServer } from './invariant-servers.js';
import { structuredQuery } from './invariant-queries.js';
import { toWireFields } from './invariant-wire.js';
import { callerNames, canonicalData, splitPath, userClaims, type CallerName, type DocData, type Round } from './invariant-world.js';

export interface Disagreement {
  round: number;
  caller: CallerName;
  method: string;
  document: string;
  data: string;
  judge: boolean;
  other: string;
  with: 'emulator' | 'hearth evaluator';
}

export interface CrossCheck {
  verdicts: number;
  disagreements: Disagreement[];
}

/** The claims an ID token of the corpus's user carries, as the rules see them in `request.auth.token`. */
function authOf(caller: CallerName): RulesAuth | null {
  if (caller === 'anonymous') return null;
  return { uid: caller, token: { sub: caller, user_id: caller, email: `${caller}@invariant.example`, email_verified: true, firebase: { sign_in_provider: 'password', identities: {} }, ...userClaims[caller] } };
}

async function hearthVerdict(rules: CompiledRules, projectId: string, method: 'get' | 'list', caller: CallerName, path: string, data: DocData | undefined): Promise<boolean> {
  const db: DatabaseId = { projectId, databaseId: '(default)' };
  const resource = data ? { key: documentKey(path), fields: fieldsFromWire(toWireFields(data), 'data'), createTime: 1, updateTime: 1 } : undefined;
  const { parent, collectionId } = splitPath(path);
  const fakeServer = { projectId } as InvariantServer;
  const query = method === 'list' ? parseStructuredQuery(db, parent, structuredQuery(fakeServer, { label: '', scope: { kind: 'collection', parent, collectionId }, filters: [{ field: '__name__', op: '==', path }] })) : undefined;
  const decision = await evaluateRules(rules, {
    db,
    method,
    path,
    ...(query ? { query, namedDocument: true } : {}),
    ...(resource ? { resource } : {}),
    auth: authOf(caller),
    time: Date.now() * 1000,
    reader: { get: async () => undefined, getAfter: async () => undefined },
    budget: { limit: 10, seen: new Set() },
  });
  return decision.allowed;
}

async function emulatorGet(emulator: InvariantServer, caller: CallerName, path: string): Promise<string> {
  const authorization = authorizationOf(emulator, caller);
  const response = await fetch(`${emulator.url}/v1/${documentName(emulator, path)}`, { headers: authorization ? { authorization } : {} });
  await response.text();
  return response.status === 403 ? 'denied' : response.status === 200 || response.status === 404 ? 'allowed' : `status ${response.status}`;
}

async function emulatorNamedQuery(emulator: InvariantServer, caller: CallerName, path: string): Promise<string> {
  const authorization = authorizationOf(emulator, caller);
  const { parent, collectionId } = splitPath(path);
  const spec = { label: '', scope: { kind: 'collection' as const, parent, collectionId }, filters: [{ field: '__name__' as const, op: '==' as const, path }] };
  const answer = await postJson(`${emulator.url}/v1/${databaseName(emulator)}/documents${parent ? `/${parent}` : ''}:runQuery`, { structuredQuery: structuredQuery(emulator, spec) }, authorization ? { authorization } : {});
  return answer.status === 403 ? 'denied' : answer.status === 200 ? 'allowed' : `status ${answer.status}`;
}

async function emulatorVerify(emulator: InvariantServer, caller: CallerName, path: string, exists: boolean): Promise<string> {
  const authorization = authorizationOf(emulator, caller);
  const answer = await postJson(`${emulator.url}/v1/${databaseName(emulator)}/documents:commit`, { writes: [{ verify: documentName(emulator, path), currentDocument: { exists } }] }, authorization ? { authorization } : {});
  return answer.status === 403 ? 'denied' : 'allowed';
}

/**
 * Every verdict of the judge on `docs` (the documents as they stand on the emulator now) against the emulator's
 * and Hearth's evaluator's. A document whose data is undefined does not exist.
 */
export async function crossCheck(emulator: InvariantServer, round: Round, docs: ReadonlyMap<string, DocData | undefined>, result: CrossCheck): Promise<void> {
  const rules = compileRules(rulesSource(round.rules, round.names));
  for (const [path, data] of docs) {
    for (const caller of callerNames) {
      const note = (method: string, mine: boolean, other: string, against: Disagreement['with']) => {
        result.verdicts++;
        if (other === (mine ? 'allowed' : 'denied')) return;
        result.disagreements.push({ round: round.index, caller, method, document: path, data: canonicalData(data), judge: mine, other, with: against });
      };
      const mayGet = data ? judge(round.rules, round.names, 'get', caller, path, data) : judgeMissingAware(round, caller, path, undefined);
      note('get', mayGet, await emulatorGet(emulator, caller, path), 'emulator');
      note('get', mayGet, (await hearthVerdict(rules, emulator.projectId, 'get', caller, path, data)) ? 'allowed' : 'denied', 'hearth evaluator');
      note('verify', mayGet, await emulatorVerify(emulator, caller, path, data !== undefined), 'emulator');
      if (!data) continue;
      const mayList = judge(round.rules, round.names, 'list', caller, path, data);
      note('list (query naming it)', mayList, await emulatorNamedQuery(emulator, caller, path), 'emulator');
      note('list (query naming it)', mayList, (await hearthVerdict(rules, emulator.projectId, 'list', caller, path, data)) ? 'allowed' : 'denied', 'hearth evaluator');
    }
  }
}

export function describeDisagreement(d: Disagreement): string {
  return `round ${d.round}: ${d.method} of ${d.document} ${d.data} by ${d.caller}: the judge ${d.judge ? 'allows' : 'denies'}, the ${d.with} says ${d.other}`;
}
