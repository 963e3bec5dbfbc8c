/**
 * Random rulesets and requests for the security-rules differential test, deterministic for a seed. The world is
 * fixed in shape (items, users with their notes, a collection group of notes) and random in content; conditions
 * are built from a grammar of atoms an app would write (auth checks, ownership, field comparisons, types, sizes,
 * `in`, lookups with get()/exists()/getAfter(), query limits), joined with && || ! and ternaries, per method.
 */
import { Random } from './random-firestore.js';
import { rulesFooter, rulesHeader } from './rules-cases.js';
import type { FilterOp, Plain, PlainFields, QuerySpec, RulesCase, WriteSpec } from './rules-requests.js';
import type { Ruleset } from './rules-run.js';
import { rulesUserNames, rulesUsers, type Caller } from './rules-tokens.js';

export const casesPerRandomRuleset = 40;

const owners = ['alice', 'bob', 'carol'];
const statuses = ['open', 'closed', 'draft'];
const tagNames = ['a', 'b', 'c'];
const titles = ['', 'x', 'hello', 'Hello World', 'a much longer title'];
const itemIds = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5'];
const missingItemIds = ['i8', 'new1'];
const noteParents = ['alice', 'bob', 'carol'];

/** What a condition may speak of: the method group it guards and the wildcards in scope. */
interface Scope {
  wildcard: 'itemId' | 'userId' | 'noteId';
  /** The notes' parent wildcard is in scope too. */
  underUser: boolean;
  reads: boolean;
  creates: boolean;
  updates: boolean;
  list: boolean;
  /** A collection-group rule: `resource` stands for any note anywhere. */
  group: boolean;
}

const compare = (rng: Random) => rng.pick(['==', '!=', '<', '<=', '>', '>=']);

function authAtom(rng: Random, scope: Scope): string {
  const uid = rng.pick([...owners, 'dave']);
  return rng.pick([
    () => 'request.auth != null',
    () => 'request.auth == null',
    () => `request.auth.uid == '${uid}'`,
    () => (scope.underUser || scope.wildcard === 'userId' ? 'request.auth.uid == userId' : `request.auth.uid == '${uid}'`),
    () => `request.auth.token.role == '${rng.pick(['admin', 'editor'])}'`,
    () => 'request.auth.token.email_verified == true',
    () => `request.auth.token.firebase.sign_in_provider == '${rng.pick(['anonymous', 'password', 'google.com'])}'`,
    () => "request.auth.token.get('role', 'none') in ['admin', 'editor']",
    () => `exists(/databases/$(database)/documents/users/$(request.auth.uid))`,
    () => `get(/databases/$(database)/documents/users/$(request.auth.uid)).data.role == '${rng.pick(['admin', 'member'])}'`,
  ])();
}

function fieldAtom(rng: Random, data: string): string {
  const k = rng.between(0, 10);
  return rng.pick([
    () => `${data}.owner == request.auth.uid`,
    () => `${data}.owner == '${rng.pick(owners)}'`,
    () => `${data}.n ${compare(rng)} ${k}`,
    () => `${data}.n ${compare(rng)} ${k}.5`,
    () => `${data}.status == '${rng.pick(statuses)}'`,
    () => `${data}.status != '${rng.pick(statuses)}'`,
    () => `${data}.status in ${JSON.stringify(rng.sample(statuses, rng.between(1, 2))).replace(/"/g, "'")}`,
    () => `${data}.public == ${rng.pick(['true', 'false'])}`,
    () => `${data}.public`,
    () => `'tags' in ${data}`,
    () => `${data}.tags.hasAny(['${rng.pick(tagNames)}'])`,
    () => `'${rng.pick(tagNames)}' in ${data}.tags`,
    () => `${data}.tags.size() ${compare(rng)} ${rng.between(0, 3)}`,
    () => `${data}.get('n', 0) ${compare(rng)} ${k}`,
    () => `${data}.title is string`,
    () => `${data}.title.size() ${compare(rng)} ${rng.between(0, 12)}`,
    () => `${data}.n is int`,
    () => `${data}.n is number`,
    () => `${data}.keys().hasOnly(['owner', 'n', 'status', 'public', 'tags', 'title', 'm', 'at'])`,
    () => `${data}.size() <= ${rng.between(3, 6)}`,
    () => `${data}.m.x ${compare(rng)} ${k}`,
    () => `${data}.get(['m', 'x'], 0) ${compare(rng)} ${k}`,
    () => `${data}.n % 2 == ${rng.between(0, 1)}`,
    () => `${data}.n + 1 ${compare(rng)} ${k}`,
    () => `int(${data}.n) == ${k}`,
    () => `string(${data}.n) == '${k}'`,
    () => `${data}.at ${rng.pick(['<', '>'])} request.time`,
    () => `${data}.at > timestamp.date(${rng.pick([2010, 2050])}, 1, 1)`,
    () => `${data}.status.matches('${rng.pick(['o.*', '.*d.*', 'closed'])}')`,
    () => `${data}.title.lower() == 'hello world'`,
    () => `${data}.status.size() == ${rng.between(4, 6)}`,
    () => `${data}.tags.hasAll(${JSON.stringify(rng.sample(tagNames, rng.between(1, 2))).replace(/"/g, "'")})`,
  ])();
}

function resourceAtom(rng: Random, scope: Scope): string {
  if (rng.chance(0.8)) return fieldAtom(rng, 'resource.data');
  return rng.pick([
    () => 'resource == null',
    () => `resource.id == '${rng.pick(scope.wildcard === 'itemId' ? itemIds : ['n1', 'n2'])}'`,
    () => `resource.data.owner == ${scope.underUser ? 'userId' : 'request.auth.uid'}`,
  ])();
}

function requestResourceAtom(rng: Random, scope: Scope): string {
  if (rng.chance(0.7)) return fieldAtom(rng, 'request.resource.data');
  return rng.pick([
    () => "request.resource.data.diff(resource.data).affectedKeys().hasOnly(['n', 'status'])",
    () => `request.resource.data.diff(resource.data).changedKeys().size() <= ${rng.between(0, 2)}`,
    () => "request.resource.data.diff(resource.data).addedKeys().hasOnly(['createdAt'])",
    () => "!request.resource.data.diff(resource.data).removedKeys().hasAny(['owner'])",
    () => "request.resource.data.keys().hasAll(['owner', 'n'])",
    () => 'request.resource.data.n == resource.data.n + 1',
    () => 'request.resource.data.owner == resource.data.owner',
    () => 'request.resource.data.createdAt == request.time',
    () => `request.resource.id == ${scope.wildcard}`,
    () => `getAfter(/databases/$(database)/documents/items/$(${scope.wildcard === 'itemId' ? 'itemId' : "'i0'"})).data.n ${compare(rng)} ${rng.between(0, 10)}`,
    () => `existsAfter(/databases/$(database)/documents/users/$(request.auth.uid))`,
  ])();
}

function otherAtom(rng: Random, scope: Scope): string {
  return rng.pick([
    () => 'true',
    () => 'false',
    () => `${scope.wildcard}.matches('${rng.pick(['i[0-2]', 'n.*', '[a-z]+[0-9]'])}')`,
    () => `${scope.wildcard}.size() ${compare(rng)} 2`,
    () => `request.time > timestamp.date(2020, 1, 1)`,
    () => `exists(/databases/$(database)/documents/items/$(${scope.wildcard}))`,
    () => "request.auth.token.email.lower().split('@')[1] == 'example.com'",
    () => (scope.list ? `request.query.limit ${compare(rng)} ${rng.between(1, 6)}` : `request.method == '${rng.pick(['get', 'list', 'create', 'update', 'delete'])}'`),
  ])();
}

function atom(rng: Random, scope: Scope): string {
  const kinds: Array<() => string> = [() => authAtom(rng, scope), () => otherAtom(rng, scope)];
  if (scope.reads || scope.updates) kinds.push(() => resourceAtom(rng, scope), () => resourceAtom(rng, scope));
  if (scope.creates || scope.updates) kinds.push(() => requestResourceAtom(rng, scope), () => requestResourceAtom(rng, scope));
  // Now and then an atom that does not fit the method, whose errors must deny alike.
  if (rng.chance(0.08)) return rng.chance(0.5) ? resourceAtom(rng, scope) : requestResourceAtom(rng, scope);
  return rng.pick(kinds)();
}

function condition(rng: Random, scope: Scope, depth: number): string {
  if (depth <= 0) return atom(rng, scope);
  const roll = rng.next();
  if (roll < 0.35) return atom(rng, scope);
  if (roll < 0.55) return `${condition(rng, scope, depth - 1)} && ${condition(rng, scope, depth - 1)}`;
  if (roll < 0.82) return `(${condition(rng, scope, depth - 1)} || ${condition(rng, scope, depth - 1)})`;
  if (roll < 0.9) return `!(${condition(rng, scope, depth - 1)})`;
  return `(${condition(rng, scope, depth - 1)} ? ${condition(rng, scope, depth - 1)} : ${condition(rng, scope, depth - 1)})`;
}

const methodGroups = ['read', 'write', 'get', 'list', 'create', 'update', 'delete', 'get, list', 'create, update', 'update, delete'];

function allows(rng: Random, wildcard: Scope['wildcard'], underUser: boolean, group: boolean, indent: string, count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const methods = group ? 'list' : rng.pick(methodGroups);
    const named = methods.split(', ');
    const has = (...names: string[]) => named.some((name) => names.includes(name));
    const scope: Scope = {
      wildcard,
      underUser,
      group,
      reads: has('read', 'get', 'list', 'delete'),
      creates: has('write', 'create'),
      updates: has('write', 'update'),
      list: has('read', 'list'),
    };
    lines.push(rng.chance(0.04) ? `${indent}allow ${methods};` : `${indent}allow ${methods}: if ${condition(rng, scope, rng.between(0, 2))};`);
  }
  return lines.join('\n');
}

export function randomRules(rng: Random): string {
  const parts = [
    `    match /items/{itemId} {\n${allows(rng, 'itemId', false, false, '      ', rng.between(2, 5))}\n    }`,
    `    match /users/{userId} {\n${allows(rng, 'userId', false, false, '      ', rng.between(1, 2))}\n` +
      `      match /notes/{noteId} {\n${allows(rng, 'noteId', true, false, '        ', rng.between(2, 3))}\n      }\n    }`,
  ];
  if (rng.chance(0.5)) parts.push(`    match /{path=**}/notes/{noteId} {\n${allows(rng, 'noteId', false, true, '      ', rng.between(1, 2))}\n    }`);
  return `${rulesHeader}\n${parts.join('\n')}\n${rulesFooter}\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// Seed data and requests

function randomFields(rng: Random, owner: string, complete: boolean): PlainFields {
  const fields: PlainFields = {};
  const maybe = () => complete || rng.chance(0.8);
  if (maybe()) fields.owner = owner;
  if (maybe()) fields.n = rng.chance(0.9) ? rng.between(0, 10) : rng.pick<Plain>([2.5, '3', { double: 4 }]);
  if (maybe()) fields.status = rng.pick(statuses);
  if (maybe()) fields.public = rng.chance(0.5);
  if (rng.chance(0.7)) fields.tags = rng.sample(tagNames, rng.between(0, 3));
  if (rng.chance(0.7)) fields.title = rng.pick(titles);
  if (rng.chance(0.3)) fields.m = { x: rng.between(0, 10) };
  if (rng.chance(0.3)) fields.at = new Date(rng.pick(['2020-03-01T00:00:00Z', '2090-03-01T00:00:00Z']));
  return fields;
}

function randomSeed(rng: Random): Record<string, PlainFields> {
  const seed: Record<string, PlainFields> = {};
  for (const id of itemIds) seed[`items/${id}`] = randomFields(rng, rng.pick(owners), rng.chance(0.6));
  seed['users/alice'] = { role: 'admin' };
  seed['users/bob'] = { role: rng.pick(['member', 'admin']) };
  for (const parent of noteParents) for (const id of ['n1', 'n2']) if (rng.chance(0.8)) seed[`users/${parent}/notes/${id}`] = randomFields(rng, rng.chance(0.8) ? parent : rng.pick(owners), rng.chance(0.6));
  return seed;
}

function randomDocumentPath(rng: Random): string {
  const roll = rng.next();
  if (roll < 0.55) return `items/${rng.pick([...itemIds, ...missingItemIds])}`;
  if (roll < 0.7) return `users/${rng.pick([...noteParents, 'dave'])}`;
  return `users/${rng.pick(noteParents)}/notes/${rng.pick(['n1', 'n2', 'n3'])}`;
}

function randomFilter(rng: Random, callerUid: string | undefined): [string, FilterOp, Plain] {
  return rng.pick<() => [string, FilterOp, Plain]>([
    () => ['owner', 'EQUAL', callerUid && rng.chance(0.7) ? callerUid : rng.pick(owners)],
    () => ['status', 'EQUAL', rng.pick(statuses)],
    () => ['status', 'IN', rng.sample(statuses, rng.between(1, 2))],
    () => ['public', 'EQUAL', rng.chance(0.7)],
    () => ['tags', 'ARRAY_CONTAINS', rng.pick(tagNames)],
    () => ['n', rng.pick<FilterOp>(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'EQUAL', 'NOT_EQUAL']), rng.between(0, 10)],
    () => ['status', 'NOT_IN', rng.sample(statuses, rng.between(1, 2))],
    () => ['tags', 'ARRAY_CONTAINS_ANY', rng.sample(tagNames, rng.between(1, 2))],
    () => ['m.x', rng.pick<FilterOp>(['LESS_THAN', 'GREATER_THAN_OR_EQUAL', 'EQUAL']), rng.between(0, 10)],
    () => ['at', rng.pick<FilterOp>(['LESS_THAN', 'GREATER_THAN']), new Date('2050-01-01T00:00:00Z')],
  ])();
}

/** Firestore takes one disjunctive filter (in, not-in, array-contains-any) per query, and no != beside a not-in. */
function compatible(filters: Array<[string, FilterOp, Plain]>, next: [string, FilterOp, Plain]): boolean {
  const disjunctive = (op: FilterOp) => op === 'IN' || op === 'NOT_IN' || op === 'ARRAY_CONTAINS_ANY';
  const ops = filters.map(([, op]) => op);
  if (filters.some(([field]) => field === next[0])) return false;
  if (disjunctive(next[1]) && ops.some(disjunctive)) return false;
  if ((next[1] === 'NOT_IN' && ops.includes('NOT_EQUAL')) || (next[1] === 'NOT_EQUAL' && ops.includes('NOT_IN'))) return false;
  return true;
}

function randomQuery(rng: Random, callerUid: string | undefined): QuerySpec {
  const roll = rng.next();
  const spec: QuerySpec =
    roll < 0.6 ? { collection: 'items' } : roll < 0.8 ? { parent: `users/${rng.pick(noteParents)}`, collection: 'notes' } : { collection: 'notes', group: true };
  const filters: Array<[string, FilterOp, Plain]> = [];
  for (let i = rng.between(0, 2); i > 0; i--) {
    const filter = randomFilter(rng, callerUid);
    // One filter per field keeps every query valid (no two inequalities or `in`s on a field to reconcile).
    if (compatible(filters, filter)) filters.push(filter);
  }
  if (spec.collection === 'items' && !spec.group && rng.chance(0.1)) filters.push(['__name__', 'EQUAL', { ref: `items/${rng.pick(itemIds)}` }]);
  if (filters.length) spec.where = filters;
  if (filters.length > 1 && rng.chance(0.25)) spec.or = true;
  if (rng.chance(0.3)) spec.orderBy = [['n', rng.pick(['ASCENDING', 'DESCENDING'] as const)]];
  if (rng.chance(0.4)) spec.limit = rng.between(1, 8);
  return spec;
}

function randomWrite(rng: Random, callerUid: string | undefined): WriteSpec {
  const owner = callerUid && rng.chance(0.75) ? callerUid : rng.pick(owners);
  const roll = rng.next();
  const path = rng.chance(0.75) ? `items/${rng.pick([...itemIds, ...missingItemIds])}` : `users/${rng.pick(noteParents)}/notes/${rng.pick(['n1', 'n2', 'n3'])}`;
  const extras = (): Partial<WriteSpec> => {
    const extra: Partial<WriteSpec> = {};
    if (rng.chance(0.15)) extra.serverTimestamps = ['createdAt'];
    if (rng.chance(0.1)) extra.increments = { n: 1 };
    return extra;
  };
  if (roll < 0.3) return { op: 'create', path, fields: randomFields(rng, owner, rng.chance(0.7)), ...extras() };
  if (roll < 0.6) {
    const fields = Object.fromEntries(Object.entries(randomFields(rng, owner, true)).filter(() => rng.chance(0.4)));
    return { op: 'update', path, fields, ...extras() };
  }
  if (roll < 0.75) return { op: 'set', path, fields: randomFields(rng, owner, rng.chance(0.7)), ...extras() };
  if (roll < 0.85) return { op: 'merge', path, fields: { n: rng.between(0, 10) }, ...extras() };
  return { op: 'delete', path };
}

function randomCase(rng: Random): RulesCase {
  const caller: Caller = rng.chance(0.15) ? null : rng.pick(rulesUserNames);
  const uid = caller === null ? undefined : rulesUsers[caller].uid;
  const roll = rng.next();
  if (roll < 0.2) return { caller, operation: { kind: 'get', path: randomDocumentPath(rng) } };
  if (roll < 0.28) return { caller, operation: { kind: 'batchGet', paths: [...new Set(Array.from({ length: rng.between(2, 3) }, () => randomDocumentPath(rng)))] } };
  if (roll < 0.53) return { caller, operation: { kind: 'query', query: randomQuery(rng, uid) } };
  if (roll < 0.6) return { caller, operation: { kind: 'count', query: randomQuery(rng, uid) } };
  const writes = Array.from({ length: rng.chance(0.25) ? 2 : 1 }, () => randomWrite(rng, uid));
  // One write per document, so that each document of a commit is judged once.
  const distinct = writes.filter((write, index) => writes.findIndex((other) => other.path === write.path) === index);
  if (roll < 0.92) return { caller, operation: { kind: 'commit', writes: distinct } };
  return { caller, operation: { kind: 'transaction', reads: [randomDocumentPath(rng)], writes: distinct.slice(0, 1) } };
}

/** About `totalCases` random requests, in rulesets of casesPerRandomRuleset, each with its own random seed data. */
export function randomRulesets(seed: number, totalCases: number): Ruleset[] {
  const rng = new Random(seed);
  const count = Math.max(1, Math.ceil(totalCases / casesPerRandomRuleset));
  return Array.from({ length: count }, (_, index) => ({
    name: `random #${index} of seed ${seed}`,
    rules: randomRules(rng),
    seed: randomSeed(rng),
    cases: Array.from({ length: Math.min(casesPerRandomRuleset, totalCases - index * casesPerRandomRuleset) }, () => randomCase(rng)),
  }));
}
