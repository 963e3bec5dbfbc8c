/**
 * The rulesets of the rules invariant and its judge: conditions built from a few atoms an app writes (signed in,
 * ownership by a field or by the path, a visibility flag, a numeric threshold, a custom claim), joined by && and
 * ||, per collection and per method (get / list), printed as rules source, and evaluated here directly, apart from
 * Hearth's engine, with the language's error semantics: reading a missing field or `request.auth.uid` without
 * auth is an error; `error && false` is false, `error || true` is true, any other error denies.
 *
 * The judge is itself checked against Hearth's evaluator and Google's emulator on the corpus
 * (tests/rules/rules-invariant.test.ts), so its verdicts can be trusted as the reference.
 */
import type { Random } from './random-firestore.js';
import type { CallerName, CollectionNames, DocData } from './invariant-world.js';
import { userClaims } from './invariant-world.js';

export type Atom =
  | { kind: 'true' }
  | { kind: 'signedIn' }
  | { kind: 'field'; field: 'visibility'; value: string }
  | { kind: 'ownerField' }
  | { kind: 'level'; op: '<=' | '>'; value: number }
  | { kind: 'pathOwner' }
  | { kind: 'claim'; role: string };

export type Condition = { kind: 'atom'; atom: Atom } | { kind: 'and' | 'or'; left: Condition; right: Condition };

/** A collection's read rules: `allow read` when combined, else `allow get` and `allow list` apart (either may be absent). */
export interface CollectionRules {
  combined: boolean;
  get?: Condition;
  list?: Condition;
}

/** `posts`: its collection; `notes`: a user's notes (the uid wildcard in scope); `group`: `/{path=**}/notes/{id}`. */
export interface RoundRules {
  posts: CollectionRules;
  notes: CollectionRules;
  group: CollectionRules;
}

function randomAtom(rng: Random, underUser: boolean): Atom {
  const atoms: Array<() => Atom> = [
    () => ({ kind: 'signedIn' }),
    () => ({ kind: 'field', field: 'visibility', value: 'public' }),
    () => ({ kind: 'field', field: 'visibility', value: rng.pick(['public', 'team', 'private']) }),
    () => ({ kind: 'ownerField' }),
    () => ({ kind: 'ownerField' }),
    () => ({ kind: 'level', op: rng.pick(['<=', '>'] as const), value: rng.int(10) }),
    () => ({ kind: 'claim', role: rng.pick(['editor', 'viewer']) }),
  ];
  if (underUser) atoms.push(() => ({ kind: 'pathOwner' }), () => ({ kind: 'pathOwner' }));
  if (rng.chance(0.04)) return { kind: 'true' };
  return rng.pick(atoms)();
}

const atom = (a: Atom): Condition => ({ kind: 'atom', atom: a });
const or = (left: Condition, right: Condition): Condition => ({ kind: 'or', left, right });
const and = (left: Condition, right: Condition): Condition => ({ kind: 'and', left, right });

/**
 * The conditions apps write for reads, which queries can be proven against (a public listing, "mine", a level
 * threshold for signed-in users, a user's own folder); the random ones mix the same atoms freely.
 */
export function realisticCondition(rng: Random, underUser: boolean): Condition {
  const templates: Array<() => Condition> = [
    () => atom({ kind: 'field', field: 'visibility', value: 'public' }),
    () => or(atom({ kind: 'field', field: 'visibility', value: 'public' }), atom({ kind: 'ownerField' })),
    () => atom({ kind: 'ownerField' }),
    () => and(atom({ kind: 'signedIn' }), atom({ kind: 'level', op: rng.pick(['<=', '>'] as const), value: rng.int(10) })),
    () => or(atom({ kind: 'claim', role: 'editor' }), atom({ kind: 'field', field: 'visibility', value: 'public' })),
    () => and(atom({ kind: 'signedIn' }), atom({ kind: 'field', field: 'visibility', value: rng.pick(['team', 'public']) })),
  ];
  if (underUser) templates.push(() => atom({ kind: 'pathOwner' }), () => or(atom({ kind: 'pathOwner' }), atom({ kind: 'field', field: 'visibility', value: 'public' })));
  return rng.pick(templates)();
}

export function randomCondition(rng: Random, underUser: boolean, depth = 0): Condition {
  if (depth === 0 && rng.chance(0.6)) return realisticCondition(rng, underUser);
  if (depth >= 2 || rng.chance(depth === 0 ? 0.35 : 0.7)) return { kind: 'atom', atom: randomAtom(rng, underUser) };
  return { kind: rng.pick(['and', 'or'] as const), left: randomCondition(rng, underUser, depth + 1), right: randomCondition(rng, underUser, depth + 1) };
}

// ---- source ---------------------------------------------------------------------------------------

function atomSource(atom: Atom): string {
  switch (atom.kind) {
    case 'true':
      return 'true';
    case 'signedIn':
      return 'request.auth != null';
    case 'field':
      return `resource.data.${atom.field} == '${atom.value}'`;
    case 'ownerField':
      return 'resource.data.owner == request.auth.uid';
    case 'level':
      return `resource.data.level ${atom.op} ${atom.value}`;
    case 'pathOwner':
      return 'request.auth.uid == uid';
    case 'claim':
      return `request.auth.token.role == '${atom.role}'`;
  }
}

export function conditionSource(condition: Condition): string {
  if (condition.kind === 'atom') return atomSource(condition.atom);
  const side = (c: Condition) => (c.kind === 'atom' ? conditionSource(c) : `(${conditionSource(c)})`);
  return `${side(condition.left)} ${condition.kind === 'and' ? '&&' : '||'} ${side(condition.right)}`;
}

function allowLines(rules: CollectionRules, indent: string): string[] {
  if (rules.combined) return [`${indent}allow read: if ${conditionSource(rules.get!)};`];
  const lines: string[] = [];
  if (rules.get) lines.push(`${indent}allow get: if ${conditionSource(rules.get)};`);
  if (rules.list) lines.push(`${indent}allow list: if ${conditionSource(rules.list)};`);
  return lines;
}

export function rulesSource(rules: RoundRules, names: CollectionNames): string {
  return [
    "rules_version = '2';",
    'service cloud.firestore {',
    '  match /databases/{database}/documents {',
    `    match /${names.posts}/{postId} {`,
    ...allowLines(rules.posts, '      '),
    '    }',
    `    match /${names.users}/{uid}/${names.notes}/{noteId} {`,
    ...allowLines(rules.notes, '      '),
    '    }',
    `    match /{path=**}/${names.notes}/{noteId} {`,
    ...allowLines(rules.group, '      '),
    '    }',
    `    match /${names.sentinel}/{id} {`,
    '      allow read: if true;',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

// ---- the judge --------------------------------------------------------------------------------------

type Truth = boolean | 'error';

interface Context {
  caller: CallerName;
  data: DocData;
  /** The `uid` wildcard, for a user's notes. */
  uid?: string;
}

function atomTruth(atom: Atom, context: Context): Truth {
  const signedIn = context.caller !== 'anonymous';
  switch (atom.kind) {
    case 'true':
      return true;
    case 'signedIn':
      return signedIn;
    case 'field': {
      const value = context.data[atom.field];
      return value === undefined ? 'error' : value === atom.value;
    }
    case 'ownerField':
      if (!signedIn || context.data.owner === undefined) return 'error';
      return context.data.owner === context.caller;
    case 'level':
      if (context.data.level === undefined) return 'error';
      return atom.op === '<=' ? context.data.level <= atom.value : context.data.level > atom.value;
    case 'pathOwner':
      return signedIn ? context.caller === context.uid : 'error';
    case 'claim': {
      if (!signedIn) return 'error';
      const role = userClaims[context.caller as keyof typeof userClaims].role;
      return role === undefined ? 'error' : role === atom.role;
    }
  }
}

function truth(condition: Condition, context: Context): Truth {
  if (condition.kind === 'atom') return atomTruth(condition.atom, context);
  const left = truth(condition.left, context);
  const right = truth(condition.right, context);
  if (condition.kind === 'and') {
    if (left === false || right === false) return false;
    return left === true && right === true ? true : 'error';
  }
  if (left === true || right === true) return true;
  return left === false && right === false ? false : 'error';
}

function grants(rules: CollectionRules, method: 'get' | 'list', context: Context): boolean {
  const condition = rules.combined ? rules.get : rules[method];
  return condition !== undefined && truth(condition, context) === true;
}

/** `read`: by get or by list (what an app is shown may come from its cache, filled by either). */
export type ReadMethod = 'get' | 'list' | 'read';

/**
 * Whether `caller` may read this version of the document at `path` by `method`: some match block of the round's
 * rules that matches the path grants it (allows are OR-ed across blocks).
 */
export function judge(rules: RoundRules, names: CollectionNames, method: ReadMethod, caller: CallerName, path: string, data: DocData): boolean {
  if (method === 'read') return judge(rules, names, 'get', caller, path, data) || judge(rules, names, 'list', caller, path, data);
  const segments = path.split('/');
  if (segments.length === 2 && segments[0] === names.sentinel) return true;
  if (segments.length === 2 && segments[0] === names.posts) return grants(rules.posts, method, { caller, data });
  if (segments.length < 2 || segments[segments.length - 2] !== names.notes) return false;
  const inGroup = grants(rules.group, method, { caller, data });
  const underUser = segments.length === 4 && segments[0] === names.users;
  return inGroup || (underUser && grants(rules.notes, method, { caller, data, uid: segments[1] }));
}

/** The rules a document is judged by, as source lines (for reports). */
export function rulesFor(rules: RoundRules, names: CollectionNames, path: string): string {
  const segments = path.split('/');
  if (segments[0] === names.posts) return `match /${names.posts}/{postId} { ${allowLines(rules.posts, '').join(' ')} }`;
  const group = `match /{path=**}/${names.notes}/{noteId} { ${allowLines(rules.group, '').join(' ')} }`;
  return segments[0] === names.users ? `match /${names.users}/{uid}/${names.notes}/{noteId} { ${allowLines(rules.notes, '').join(' ')} } ${group}` : group;
}
