/**
 * Issue 28, item 7: rules regular expressions run on RE2's linear-time engine with RE2's syntax.
 * `matches()` used to run on JavaScript's backtracking RegExp, so one anonymous write of 40 letters
 * and a `!` against `^([a-zA-Z]+ ?)*$` held the whole server for hours (a second at 28 letters,
 * four times longer for every two more). Hearth runs as its own process here, so a server stuck
 * in a match fails this file by its timeout instead of freezing the test runner; nothing is timed.
 * The console's rules simulation runs the same engine. Then the syntax and the semantics of
 * matches, replace and split, decided by Google's emulator when it is installed.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { compileRules, evaluateRules, RulesCompileError, type RulesRequest } from '../../packages/server/src/firestore/rules/index.js';
import { findCloudSdkWithFirestoreEmulator, startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { freePort, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';

const projectId = 'demo-regex';
const namePattern = '^([a-zA-Z]+ ?)*$';
const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /people/{id} {
      allow read;
      allow create: if request.resource.data.name.matches('${namePattern}');
    }
  }
}
`;
/** 2^40 ways to split the letters before the `!` fails them all, for a backtracking engine. */
const hostileName = `${'a'.repeat(40)}!`;
const adminKey = 'regex-test-admin-key-0123456789abcdef';

describe('a backtracking-prone pattern costs a write no more than its length', { timeout: 180_000 }, () => {
  let hearth: SpawnedHearth;
  let dataDir: string;
  const documents = () => `${hearth.url}/v1/projects/${projectId}/databases/(default)/documents`;
  const create = (id: string, name: string) =>
    fetch(`${documents()}/people?documentId=${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fields: { name: { stringValue: name } } }) });

  before(async () => {
    dataDir = tempDataDir();
    const rulesFile = join(dataDir, 'firestore.rules');
    writeFileSync(rulesFile, rules);
    hearth = await spawnHearth(['--port', String(await freePort()), '--data', dataDir, '--project', projectId, '--rules', rulesFile, '--log-level', 'warn'], { HEARTH_ADMIN_KEY: adminKey });
  });
  after(async () => {
    // A server stuck in a match never handles SIGTERM.
    await hearth?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('an anonymous hostile write is denied while another client writes and reads', async () => {
    const [hostile, legit] = await Promise.all([create('hostile', hostileName), create('ada', 'Ada Lovelace')]);
    assert.equal(hostile.status, 403, await hostile.text());
    assert.equal(legit.status, 200, await legit.text());
    const read = await fetch(`${documents()}/people/ada`);
    assert.equal(read.status, 200);
    assert.equal((await fetch(`${documents()}/people/hostile`)).status, 404, 'the denied write left nothing');
  });

  test('a name as long as a document allows is judged, in either outcome', async () => {
    const long = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 6 ? ' ' : 'x')).join('');
    assert.equal((await create('long', `${long}y`)).status, 200);
    assert.equal((await create('long-hostile', `${long}!`)).status, 403);
  });

  test("the console's rules simulation runs the same engine", async () => {
    const simulate = await fetch(`${hearth.url}/hearth/v1/console/projects/${projectId}/databases/(default)/rules:simulate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: rules, method: 'create', path: 'people/p1', data: { name: { stringValue: hostileName } } }),
    });
    assert.equal(simulate.status, 200);
    const answer = (await simulate.json()) as { allowed: boolean };
    assert.equal(answer.allowed, false);
  });
});

// ---- syntax and semantics, as Google's emulator decides them --------------------------------------

const db = { projectId, databaseId: '(default)' };
const wrap = (body: string) => `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n${body}\n  }\n}`;

/**
 * Expressions judged by `allow get: if <expression>`, with what the emulator (1.19.9) answered,
 * so the table also checks Hearth where the emulator is not installed. Each construct where
 * JavaScript's RegExp and RE2 part ways is here, and both answers where a value is compared.
 */
const expressions: Array<[string, boolean]> = [
  ['"aaa".matches("(?U)a+")', true],
  ['"123".matches("\\\\pN+")', true],
  ['"123".matches("[[:^alpha:]]+")', true],
  ['"a\\nb".matches("(?s)a.b")', true],
  ['"a\\nb".matches("a.b")', false],
  ['"😀".matches("\\\\x{1F600}")', true],
  ['"😀".matches(".")', true],
  ['"\\u00A0".matches("\\\\s")', false],
  ['"\\u000B".matches("\\\\s")', false],
  ['"é".matches("\\\\w")', false],
  ['"\\u212A".matches("(?i)k")', true],
  ['"é".matches("\\\\p{Latin}")', true],
  ['"ab".matches("a|ab")', true],
  ['"a".matches("(?<name>a)")', true],
  ['"a{,3}".matches("a{,3}")', true],
  ['"a{2".matches("a{2")', true],
  ['"]".matches("[]a]")', true],
  ['"S".matches("\\\\123")', true],
  ['"abc".replace("b*", "-") == "-a--c-"', true],
  ['"abc".replace("b*", "-") == "-a-c-"', false],
  ['"k=v".replace("(\\\\w)=(\\\\w)", "$2=$1") == "v=k"', true],
  ['"k=v".replace("(\\\\w)=(\\\\w)", "\\\\2=\\\\1") == "v=k"', false],
  ['"abc".replace("b", "$0") == "abc"', true],
  ['"abc".replace("b", "\\\\\\\\") == "a\\\\c"', true],
  ['"abc".replace("b", "$") == "a$c"', true],
  ['"abc".replace("(?P<x>b)", "${x}") == "abc"', true],
  ['"a,b,,c,,".split(",") == ["a","b","","c"]', true],
  ['"a,b,,c,,".split(",") == ["a","b","","c","",""]', false],
  ['",a".split(",") == ["","a"]', true],
  ['"abc".split("") == ["","a","b","c"]', true],
  ['"abc".split("") == ["a","b","c"]', false],
  ['"abc".split("x*")[0] == ""', true],
  ['"".split(",") == [""]', true],
];

/** Literal patterns RE2 refuses: the whole ruleset is refused with the emulator's message. */
const refusedPatterns = ['a++', 'a\\\\Z', 'a\\\\C', '(a)\\\\1', '(?=a)a', '(?<=a)b', 'a{1001}'];

function judge(source: string) {
  const request: RulesRequest = { db, method: 'get', path: 'c/x', auth: null, time: Date.now() * 1000, reader: { get: async () => undefined, getAfter: async () => undefined }, budget: { limit: 10, seen: new Set() } } as RulesRequest;
  return evaluateRules(compileRules(source), request);
}

function compileMessage(source: string): string {
  try {
    compileRules(source);
    return '';
  } catch (error) {
    if (!(error instanceof RulesCompileError)) throw error;
    return error.message;
  }
}

test('matches, replace and split decide as the emulator decided', async () => {
  const disagreements: string[] = [];
  for (const [expression, allowed] of expressions) {
    const decision = await judge(wrap(`    match /c/{id} { allow get: if ${expression}; }`));
    if (decision.allowed !== allowed) disagreements.push(`${expression}: emulator ${allowed}, Hearth ${decision.allowed} (${decision.reason})`);
  }
  assert.deepEqual(disagreements, []);
});

test('constructs RE2 lacks are compile errors when literal, evaluation errors otherwise; a missing group in a replacement denies', async () => {
  for (const pattern of refusedPatterns) {
    const message = compileMessage(wrap(`    match /c/{id} { allow get: if "a".matches("${pattern}"); }`));
    assert.match(message, /Invalid regular expression pattern\. Pattern: /, pattern);
  }
  const dynamic = await judge(wrap('    match /c/{id} { allow get: if "aa".matches(request.method + "(a)\\\\1"); }'));
  assert.equal(dynamic.allowed, false);
  assert.match(dynamic.reason ?? '', /Invalid regular expression pattern\. Pattern: get\(a\)\\1\./);
  const missingGroup = await judge(wrap('    match /c/{id} { allow get: if "abc".replace("b", "$9") == "a$9c"; }'));
  assert.equal(missingGroup.allowed, false);
});

describe('the same table, live against Google\'s emulator', { skip: !findCloudSdkWithFirestoreEmulator() && 'the official Firestore emulator is not installed' }, () => {
  let emulator: GoogleEmulator;
  before(async () => {
    emulator = (await startGoogleEmulator())!;
  });
  after(async () => emulator?.stop());

  const load = (source: string) =>
    fetch(`${emulator.url}/emulator/v1/projects/${projectId}:securityRules`, { method: 'PUT', body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }) });

  test('every expression: the emulator still answers what the table says', async () => {
    const source = wrap(expressions.map(([expression], i) => `    match /c${i}/{id} { allow get: if ${expression}; }`).join('\n'));
    assert.equal((await load(source)).status, 200);
    const disagreements: string[] = [];
    for (const [i, [expression, allowed]] of expressions.entries()) {
      const answer = await fetch(`${emulator.url}/v1/projects/${projectId}/databases/(default)/documents/c${i}/x`);
      const oracle = answer.status === 404;
      if (oracle !== allowed) disagreements.push(`${expression}: emulator ${oracle} (${answer.status}), table ${allowed}`);
    }
    assert.deepEqual(disagreements, []);
  });

  test('refused literal patterns: the same message', async () => {
    for (const pattern of refusedPatterns) {
      const source = wrap(`    match /c/{id} { allow get: if "a".matches("${pattern}"); }`);
      const answer = await load(source);
      assert.equal(answer.status, 400, pattern);
      const body = (await answer.json()) as { error: { message: string } };
      assert.equal(compileMessage(source), body.error.message, pattern);
    }
  });
});
