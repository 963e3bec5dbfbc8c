/**
 * The rules language's expressions and standard library, judged by evaluateRules on a get of a
 * document built here. The table's expected answers were recorded from Google's Firestore
 * emulator (1.19.9) with the same document and the same rule (`allow get: if <expr>`);
 * firestore-rules-language-emulator.test.ts re-checks a sample of them live.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Doc } from '../../packages/server/src/firestore/core/documents.js';
import { fieldsFromWire } from '../../packages/server/src/firestore/core/value-wire.js';
import { compileRules, evaluateRules, type RulesDecision, type RulesRequest } from '../../packages/server/src/firestore/rules/index.js';

const db = { projectId: 'demo-probe', databaseId: '(default)' };
const doc: Doc = {
  key: { path: 't/d1', parent: 't', collectionId: 't', id: 'd1' },
  fields: fieldsFromWire(
    {
      a: { integerValue: '1' },
      n: { nullValue: null },
      s: { stringValue: 'hello' },
      m: { mapValue: { fields: { x: { integerValue: '2' } } } },
      r: { referenceValue: 'projects/demo-probe/databases/(default)/documents/users/u1' },
      f: { doubleValue: 1.5 },
    },
    'fields',
  ),
  createTime: 1,
  updateTime: 1,
};

function rulesFor(condition: string, functions = ''): string {
  return `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n${functions}\n    match /t/{id} {\n      allow get: if ${condition};\n    }\n  }\n}`;
}

function getRequest(overrides: Partial<RulesRequest> = {}): RulesRequest {
  return {
    db,
    method: 'get',
    path: 't/d1',
    auth: null,
    time: Date.UTC(2024, 0, 2, 3, 4, 5) * 1000,
    resource: doc,
    reader: { get: async () => undefined, getAfter: async () => undefined },
    budget: { limit: 10, seen: new Set() },
    ...overrides,
  };
}

async function judge(condition: string, overrides: Partial<RulesRequest> = {}, functions = ''): Promise<RulesDecision> {
  return evaluateRules(compileRules(rulesFor(condition, functions)), getRequest(overrides));
}

/** [expression, whether the emulator allowed the get] */
const recorded: [string, boolean][] = [
  ["{'z': 1, 'a': 2}.keys() == ['a', 'z']", true],
  ["{'z': 1, 'a': 2}.keys() == ['z', 'a']", false],
  ["false && resource.data.zz == 1", false],
  ["resource.data.zz == 1 && false", false],
  ["true || resource.data.zz == 1", true],
  ["resource.data.zz == 1 || true", true],
  ["resource.data.zz == 1 || false", false],
  ["resource.data.zz", false],
  ["resource.data.n.x == 1", false],
  ["resource.data.a + 1.5 == 2.5", true],
  ["1 == 1.0", true],
  ["7 / 2 == 3", true],
  ["-7 / 2 == -3", true],
  ["-7 % 2 == -1", true],
  ["1 / 0 == 1", false],
  ["9223372036854775807 + 1 > 0", false],
  ["string(resource.data.r) == \"x\"", false],
  ["resource.data.r == /databases/(default)/documents/users/u1", true],
  ["resource.__name__ == /databases/$(database)/documents/t/d1", true],
  ["string(resource.__name__) == \"x\"", false],
  ["resource.data.s + 1 == 1", false],
  ["resource.data.s.foo()", false],
  ["resource.data.s[10] == \"x\"", false],
  ["[1,2][5] == 1", false],
  ["resource.data.m.y == 1", false],
  ["resource.data.m['y'] == 1", false],
  ["request.auth.uid == \"x\"", false],
  ["1.0 / 0 > 1", true],
  ["true ? resource.data.zz : true", false],
  ["resource.data.a is int", true],
  ["resource.data.f is number", true],
  ["unknownVar == 1", false],
  ["foo(1)", false],
  ["1 in resource.data.s", false],
  ["string(1.0) == \"x\"", false],
  ["string(null) == \"x\"", false],
  ["int(\"12\") == 12", true],
  ["int(1.9) == 1", true],
  ["int(-1.9) == -1", true],
  ["float(\"x\") == 1", false],
  ["request.path == /databases/$(database)/documents/t/d1", true],
  ["string(request.path) == \"x\"", false],
  ["request.time == request.time", true],
  ["string(request.time) == \"x\"", false],
  ["string(1.0) == \"1.0\"", true],
  ["string(1.5) == \"1.5\"", true],
  ["string(100000000.0) == \"1.0E8\"", true],
  ["string(100000000.0) == \"1e+08\"", false],
  ["string(0.1) == \"0.1\"", true],
  ["string(true) == \"true\"", true],
  ["string(null) == \"null\"", true],
  ["string(/a/b) == \"/a/b\"", true],
  ["string(resource.data.r) == \"/databases/(default)/documents/users/u1\"", true],
  ["string(resource.data.r) == \"projects/demo-probe/databases/(default)/documents/users/u1\"", false],
  ["string(resource.__name__) == \"/databases/(default)/documents/t/d1\"", true],
  ["resource.__name__[3] == \"t\"", true],
  ["resource.__name__[0] == \"databases\"", true],
  ["resource.data.r[5] == \"u1\"", false],
  ["resource.id == \"d1\"", true],
  ["path(\"a/b\") == /a/b", true],
  ["path(\"/a/b\") == /a/b", true],
  ["/a/$(\"b/c\") == /a/b/c", false],
  ["/a/$('b/c')[1] == 'b/c'", true],
  ["\"abc\".matches(\"a.c\")", true],
  ["\"abc\".matches(\"b\")", false],
  ["\"a.b\".split(\"[.]\") == [\"a\",\"b\"]", true],
  ["\"aXbX\".replace(\"X\", \"-\") == \"a-b-\"", true],
  ["{\"a\":1}.get(\"b\", 2) == 2", true],
  ["{\"a\":{\"b\":1}}.get([\"a\",\"b\"], 2) == 1", true],
  ["{\"a\":1}.get([\"a\",\"b\"], 2) == 2", true],
  ["{\"a\":1}.diff({\"a\":2,\"b\":1}).changedKeys() == [\"a\"].toSet()", true],
  // a.diff(b) goes from b to a: added are a's own keys, removed are b's (the differential corpus's MapDiff ruleset agrees).
  ["{\"a\":1,\"c\":3}.diff({\"b\":2,\"c\":3}).addedKeys() == [\"a\"].toSet()", true],
  ["{\"a\":1,\"c\":3}.diff({\"b\":2,\"c\":3}).removedKeys() == [\"b\"].toSet()", true],
  ["[1,2,3][1:2] == [2]", true],
  ["\"hello\"[1:3] == \"el\"", true],
  ["[1,2] + [3] == [1,2,3]", false],
  ["[1,2].concat([3]) == [1,2,3]", true],
  ["[3,1].toSet() == [1,3].toSet()", true],
  ["[1] == [1.0]", false],
  ["timestamp.date(2020,1,2).dayOfWeek() == 4", true],
  ["timestamp.value(1000).toMillis() == 1000", true],
  ["timestamp.value(0) + duration.value(1, \"s\") == timestamp.value(1000)", true],
  ["timestamp.value(5000) - timestamp.value(1000) == duration.value(4, \"s\")", true],
  ["duration.value(90, \"m\").seconds() == 5400", true],
  ["duration.time(1,2,3,4).nanos() == 4", true],
  ["duration.abs(duration.value(-1, \"s\")) == duration.value(1, \"s\")", true],
  ["math.round(2.5) == 3", true],
  ["math.round(-2.5) == -3", false],
  ["math.floor(1.5) == 1", true],
  ["math.floor(1.5) is int", false],
  ["math.abs(-1) == 1", true],
  ["math.sqrt(4) == 2.0", true],
  ["math.pow(2, 3) == 8.0", true],
  ["math.pow(2,3) is float", true],
  ["hashing.md5(\"a\") == b\"\\x0c\\xc1\\x75\\xb9\\xc0\\xf1\\xb6\\xa8\\x31\\xc3\\x99\\xe2\\x69\\x77\\x26\\x61\"", true],
  ["hashing.crc32(\"a\").toHexString() == \"E8B7BE43\"", false],
  ["hashing.crc32(\"a\").toHexString() == \"e8b7be43\"", false],
  ["b\"abc\".toBase64() == \"YWJj\"", true],
  ["latlng.value(0,0).distance(latlng.value(0,1)) > 111000", true],
  ["latlng.value(0,0).distance(latlng.value(0,1)) < 111200", true],
  ["latlng.value(91,0) == null", false],
  ["\"a\" < \"b\"", true],
  ["[1] < [2]", false],
  ["null == null", true],
  ["null < 1", false],
  ["1 < 1.5", true],
  ["\"x\" in {\"x\":1}", true],
  ["1 in [1.0]", false],
  ["\"x\" in [\"x\"].toSet()", true],
  ["int(\"0x10\") == 16", false],
  ["int(\" 5\") == 5", false],
  ["float(\"1e3\") == 1000.0", true],
  ["bool(\"true\")", false],
  ["string(-0.0) == \"-0.0\"", true],
  ["\"\u00c4B\".lower() == \"\u00e4b\"", false],
  ["\" a \".trim() == \"a\"", true],
  ["\"\u00e9\".size() == 1", true],
  ["\"\u00e9\".toUtf8().size() == 2", true],
  ["[1,2].join(\",\") == \"1,2\"", true],
  ["[\"a\",\"b\"].join(\",\") == \"a,b\"", true],
  ["[\"a\",\"b\"].join() == \"ab\"", false],
  ["[1,2,2].removeAll([2]) == [1]", true],
  ["[1,2].hasOnly([1,2,3])", true],
  ["resource.data.keys().hasAll([\"a\"])", true],
  ["{\"a\":1}.keys() == [\"a\"]", true],
  ["debug(1) == 1", true],
  ["1 is number", true],
  ["1.0 is int", false],
  ["/a is path", true],
  ["{\"a\":1} is map", true],
  ["[1] is list", true],
  ["[1].toSet() is set", false],
  ["b\"a\" is bytes", true],
  ["request.time is timestamp", true],
  ["duration.value(1,\"s\") is duration", true],
  ["latlng.value(1,1) is latlng", true],
  ["{\"a\":1}.diff({}) is map_diff", true],
  ["-9223372036854775808 < 0", true],
  ["-(-9223372036854775807 - 1) > 0", false],
  ["5 % 0 == 0", false],
  ["5.0 % 2 == 1.0", true],
  ["\"a\" * 2 == \"aa\"", false],
  ["!1", false],
  ["-\"a\" == 1", false],
  ["1 == \"1\"", false],
  ["1 != \"1\"", true],
  ["true == 1", false],
  ["\"abc\".matches(\"(?i)ABC\")", true],
  ["\"abc\".matches(\"\\\\d\")", false],
  ["\"a1\".matches(\".\\\\d\")", true],
  ["\"ab\".matches(\"(?P<x>a)b\")", true],
  ["request.auth == null", true],
  ["request.method == \"get\"", true],
  ["resource.data.f.size() == 1", false],
  ["timestamp.date(2020,1,2) == timestamp.date(2020,1,2)", true],
  ["request.time.date() is timestamp", true],
  ["timestamp.date(2020,1,2).time() is duration", true],
  ["hashing.crc32(\"a\").size() == 4", true],
  ["hashing.crc32(\"a\").toHexString() == \"43BEB7E8\"", true],
  ["hashing.crc32(\"a\").toHexString().size() == 8", true],
  ["hashing.crc32(\"a\") == b\"\\xe8\\xb7\\xbe\\x43\"", false],
  ["hashing.md5(\"a\").toHexString() == \"0CC175B9C0F1B6A831C399E269772661\"", true],
  ["hashing.crc32c(\"a\").toHexString() == \"C1D04330\"", false],
  ["hashing.crc32(\"a\").toHexString() == \"00000000E8B7BE43\"", false],
  ["hashing.crc32(\"a\").toHexString().size() == 16", false],
  ["hashing.crc32(\"a\").size() == 8", false],
  ["\"\u00c4B\".lower() == \"\u00e4B\"", false],
  ["\"\u00c4\".size() == 1", true],
  ["\"\u00c4B\".lower().size() == 2", true],
  ["\"\u00c4B\".lower() == \"\u00c4b\"", true],
  ["\"\u00c9\".upper() == \"\u00c9\"", true],
  ["\"\u00e9\".upper() == \"\u00c9\"", false],
  ["[1].toSet() is list", false],
  ["[1].toSet() is map", false],
  ["[1].toSet() is set", false],
  ["[1].toSet().size() == 1", true],
  ["{\"a\":1}.keys().toSet() is set", false],
  ["{\"a\":1}.diff({}).addedKeys() is set", false],
  ["\"abc\"[1] == \"b\"", true],
  ["\"a\" in \"abc\"", false],
  ["path(\"a/b\")[0] == \"a\"", true],
  ["(/a/b).size() == 2", false],
  ["request.path.bind({}) == request.path", true],
  ["timestamp.value(-1).toMillis() == -1", true],
  ["duration.value(-1500, \"ms\").seconds() == -1", true],
  ["duration.value(-1500, \"ms\").nanos() == -500000000", true],
  ["request.time.toMillis() > 0", true],
  ["string(5) == \"5\"", true],
  ["\"%s\".size() == 2", true],
  ["1 < \"a\"", false],
  ["\"a\" == 1 || true", true],
];

test('every recorded expression is judged as Google\'s emulator judged it', async () => {
  const disagreements: string[] = [];
  for (const [expression, allowed] of recorded) {
    const decision = await judge(expression);
    if (decision.allowed !== allowed) disagreements.push(`${expression}: expected ${allowed}, got ${decision.allowed} (${decision.reason})`);
  }
  assert.deepEqual(disagreements, []);
});

test('reasons name the value or the error of each allow, with its line, as the emulator words them', async () => {
  assert.deepEqual(await judge('resource.data.zz == 1'), { allowed: false, reason: "Property zz is undefined on object. for 'get' @ L6" });
  assert.deepEqual(await judge('resource.data.n.x == 1'), { allowed: false, reason: "Null value error. for 'get' @ L6" });
  assert.deepEqual(await judge('1 / 0 == 1'), { allowed: false, reason: "Divide by zero error. for 'get' @ L6" });
  assert.deepEqual(await judge('false'), { allowed: false, reason: "false for 'get' @ L6" });
  assert.equal((await judge('"a" + 1 == 1')).reason, "Unsupported operation error. Received: string + int. Expected: int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration. for 'get' @ L6");
  assert.equal((await judge('9223372036854775807 + 1 > 0')).reason, "Integer value is out of the [-9223372036854775808, 9223372036854775807] range. for 'get' @ L6");
  assert.equal((await judge('[1,2][5] == 1')).reason, "Index out of bound error. Index: [5] , size: [2]. for 'get' @ L6");
  assert.equal((await judge('resource.data.s.foo()')).reason, "Function not found error: Name: [foo]. for 'get' @ L6");
  assert.deepEqual(await judge('true'), { allowed: true, reason: "allowed by 'get' @ L6", decidedBy: { line: 6, column: 7, match: '/databases/{database}/documents/t/{id}', condition: 'true' } });

  const two = compileRules(`rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /t/{id} {
      allow get: if false;
    }
    match /{any=**} {
      allow read: if request.auth.uid == 'x';
      allow write;
    }
  }
}`);
  assert.deepEqual(await evaluateRules(two, getRequest()), { allowed: false, reason: "false for 'get' @ L5, Null value error. for 'get' @ L8" });
  assert.deepEqual(await evaluateRules(two, getRequest({ auth: { uid: 'x', token: {} } })), {
    allowed: true,
    reason: "allowed by 'get' @ L8",
    decidedBy: { line: 8, column: 7, match: '/databases/{database}/documents/{any=**}', condition: "request.auth.uid == 'x'" },
  });
  assert.deepEqual(await evaluateRules(two, getRequest({ method: 'delete' })), { allowed: true, reason: "allowed by 'delete' @ L9", decidedBy: { line: 9, column: 7, match: '/databases/{database}/documents/{any=**}' } });
  const none = compileRules(`rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /t/{id} { allow create: if true; }
  }
}`);
  assert.deepEqual(await evaluateRules(none, getRequest()), { allowed: false, reason: 'No matching allow statements' });
});

test('functions: arguments, lets read lazily, wildcards of the enclosing matches, nested visibility', async () => {
  const rules = compileRules(`rules_version = '2';
service cloud.firestore {
  function signedIn() { return request.auth != null; }
  match /databases/{database}/documents {
    function owns(uid) {
      let broken = resource.data.missing;
      let mine = request.auth.uid == uid;
      return mine;
    }
    match /users/{userId} {
      function isSelf() { return owns(userId); }
      allow get: if signedIn() && isSelf();
      match /posts/{postId} {
        allow get: if isSelf() && postId.size() > 2 && database == '(default)';
      }
    }
  }
}`);
  const user = (uid: string | null, path: string) =>
    evaluateRules(rules, getRequest({ path, auth: uid ? { uid, token: {} } : null, resource: { ...doc, key: { path, parent: '', collectionId: '', id: '' } } }));
  assert.equal((await user('u1', 'users/u1')).allowed, true, 'an unused failing let does not fail the function');
  assert.equal((await user('u2', 'users/u1')).allowed, false);
  assert.equal((await user(null, 'users/u1')).allowed, false);
  assert.equal((await user('u1', 'users/u1/posts/abc')).allowed, true);
  assert.equal((await user('u1', 'users/u1/posts/ab')).allowed, false);
  assert.equal((await user('u1', 'users/u1/other/abc')).allowed, false, 'rules do not cascade to other subcollections');
});

test('request: auth token claims, method, path, time; request.resource and diff on update', async () => {
  const auth = { uid: 'u1', token: { email: 'a@b.c', email_verified: true, admin: true, iat: 1700000000, firebase: { sign_in_provider: 'password' } } };
  for (const condition of [
    "request.auth.token.email == 'a@b.c' && request.auth.token.email_verified",
    'request.auth.token.admin == true && request.auth.token.iat is int',
    "request.auth.token.firebase.sign_in_provider == 'password'",
    "request.method == 'get' && request.path == /databases/(default)/documents/t/d1",
    'request.time == timestamp.date(2024, 1, 2) + duration.time(3, 4, 5, 0)',
    'request.time.year() == 2024 && request.time.month() == 1 && request.time.day() == 2 && request.time.hours() == 3',
    'request.time.dayOfWeek() == 2 && request.time.dayOfYear() == 2 && request.time.toMillis() % 1000 == 0',
    'request.time > timestamp.value(0) && request.time - duration.value(1, "d") < request.time',
  ]) {
    assert.equal((await judge(condition, { auth })).allowed, true, condition);
  }

  const rules = compileRules(`rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /t/{id} {
      allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['a', 'new'])
        && request.resource.data.a == resource.data.a + 1;
    }
  }
}`);
  const update = (requestResource: Doc) => evaluateRules(rules, getRequest({ method: 'update', requestResource }));
  const withWire = (wire: Parameters<typeof fieldsFromWire>[0]) => {
    const fields = new Map(doc.fields);
    for (const [key, value] of fieldsFromWire(wire, 'fields')) fields.set(key, value);
    return { ...doc, fields };
  };
  assert.equal((await update(withWire({ a: { integerValue: '2' }, new: { booleanValue: true } }))).allowed, true);
  assert.equal((await update(withWire({ a: { integerValue: '2' }, s: { stringValue: 'changed' } }))).allowed, false);
  assert.equal((await update(withWire({ a: { integerValue: '3' } }))).allowed, false);
});

test('regular expressions follow RE2: full match, flags, classes; constructs RE2 lacks are refused', async () => {
  for (const condition of [
    '"abc".matches("a.c")',
    '!"abc".matches("b")',
    '"ABC".matches("(?i)abc")',
    '"a-b_c".matches("[[:alpha:]]\\\\-[a-z]_\\\\w")',
    '"αβγ".matches("\\\\p{Greek}+")',
    '"x.y".matches("\\\\Qx.y\\\\E")',
    '"2024-01-02".matches("\\\\d{4}-\\\\d{2}-\\\\d{2}")',
    '"a1b2".replace("[0-9]", "#") == "a#b#"',
    // Java's replacement syntax, as the emulator reads it (tests/rules/regex-re2.test.ts).
    '"k=v".replace("(\\\\w)=(\\\\w)", "$2=$1") == "v=k"',
    '"a, b,c".split(", ?") == ["a", "b", "c"]',
  ]) {
    assert.equal((await judge(condition)).allowed, true, condition);
  }
  // A pattern that is not a literal is only seen when evaluated: it denies with the emulator's message.
  const decision = await judge('"aa".matches(resource.data.s + "(a)\\\\1")');
  assert.equal(decision.reason, "Invalid regular expression pattern. Pattern: hello(a)\\1. for 'get' @ L6");
});

test('get() and exists() read through the reader, count each path once, and deny past the budget', async () => {
  const friend: Doc = { key: { path: 'users/u2', parent: 'users', collectionId: 'users', id: 'u2' }, fields: fieldsFromWire({ role: { stringValue: 'admin' } }, 'fields'), createTime: 1, updateTime: 1 };
  const reads: string[] = [];
  const reader = {
    get: async (path: string) => (reads.push(path), path === 'users/u2' ? friend : undefined),
    getAfter: async (path: string) => (reads.push(`after:${path}`), undefined),
  };
  const budget = { limit: 3, seen: new Set<string>() };
  const condition = [
    "get(/databases/$(database)/documents/users/u2).data.role == 'admin'",
    "get(/databases/$(database)/documents/users/u2).id == 'u2'",
    'exists(/databases/$(database)/documents/users/u2)',
    '!exists(/databases/$(database)/documents/users/u3)',
    'get(/databases/$(database)/documents/users/u3) == null',
    '!existsAfter(/databases/$(database)/documents/users/u2)',
  ].join(' && ');
  const decision = await judge(condition, { reader, budget });
  assert.equal(decision.allowed, true, decision.reason);
  assert.deepEqual(reads, ['users/u2', 'users/u3', 'after:users/u2']);
  assert.equal(budget.seen.size, 3);

  const over = await judge('exists(/databases/$(database)/documents/users/u9)', { reader, budget });
  assert.equal(over.allowed, false);
  assert.match(over.reason, /Exceeded the limit of 3 document lookups/);
  assert.equal((await judge('exists(/databases/$(database)/documents/users/u2)', { reader, budget })).allowed, true, 'a path already looked up in this request costs nothing');
});

test('debug(x) returns x and hands its text to the optional hook', async () => {
  const logged: string[] = [];
  const rules = compileRules(rulesFor("debug(resource.data.m).x == 2 && debug([1, 'a', 1.5, null]).size() == 4"));
  const decision = await evaluateRules(rules, getRequest(), { debug: (text) => logged.push(text) });
  assert.equal(decision.allowed, true, decision.reason);
  assert.deepEqual(logged, ['{"x": 2}', '[1, "a", 1.5, null]']);
});
