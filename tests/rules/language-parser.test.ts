/**
 * compileRules: a corpus of valid rulesets, each refusal with its line, column and the emulator's
 * words (recorded from Google's Firestore emulator 1.19.9 with the same sources), the warnings the
 * emulator compiles with, and which match blocks a path reaches (`{x}`, `{x=**}` in versions 1 and 2).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRules, evaluateRules, RulesCompileError, type RulesRequest } from '../../packages/server/src/firestore/rules/index.js';

const wrap = (body: string, version = "rules_version = '2';\n") => `${version}service cloud.firestore {\n  match /databases/{database}/documents {\n${body}\n  }\n}`;

function compileError(source: string): RulesCompileError {
  try {
    compileRules(source);
  } catch (error) {
    if (error instanceof RulesCompileError) return error;
    throw error;
  }
  assert.fail('expected a compile error');
}

test('a corpus of valid rulesets compiles without errors', () => {
  const corpus = [
    wrap(`    match /{document=**} {
      allow read, write: if false;
    }`),
    wrap(`    // comments everywhere /* and */ inside a line comment
    function isOwner(uid) { let u = request.auth.uid; return u != null && u == uid; }
    /* a block
       comment */
    match /users/{userId} {
      allow read: if isOwner(userId);
      allow create, update: if request.resource.data.keys().hasOnly(['name', 'age'])
        && request.resource.data.name is string && request.resource.data.age is int;
      allow delete: if false
      match /private/{doc=**} { allow read: if isOwner(userId); }
    }
    match /{path=**}/posts/{post} { allow list: if resource.data.public == true; }`),
    wrap(`    match /rooms/{room} {
      allow get: if get(/databases/$(database)/documents/rooms/$(room)/members/$(request.auth.uid)).data.role in ['owner', 'writer']
        || exists(/databases/$(database)/documents/admins/$(request.auth.uid));
      allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title'])
        && request.time < resource.data.lockedAt + duration.value(1, 'h')
        && request.resource.data.title.size() <= 100
        && request.resource.data.title.matches('^[^<>]*$');
      allow create: if request.resource.data.get(['meta', 'rev'], 0) == 0 ? true : false;
    }`),
    wrap(`    match /x/{y} {
      allow read: if [1, 2.5, 'a', "b", r'\\d', b'\\x00', null, true, {'k': -1}, /a/b][0:2].size() == 2
        && -9223372036854775808 < 0 && !false && 7 % 3 == 1 && (1 + 2) * 3 == 9;
    }`),
    "service cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read; } } }",
  ];
  for (const source of corpus) {
    const rules = compileRules(source);
    assert.ok(rules.issues.every((issue) => issue.severity === 'WARNING'), JSON.stringify(rules.issues));
  }
});

test('refusals carry the line, column and words of the emulator', () => {
  const cases: [string, string][] = [
    [wrap('    match /t/{id} {\n      allow get: true;\n    }'), "L5:18 Missing 'if' before conditional expression."],
    [wrap('    function f() { return true; }\n    function f() { return false; }\n    match /t/{id} {\n      allow get: if f();\n    }'), 'L5:14 Function f is already defined.'],
    [wrap('    match /t/{id} { allow get; }', "rules_version = '3';\n"), 'L1:1 Unsupported rules version 3.'],
    [wrap('    match /{a=**}/x/{b=**} {\n      allow get;\n    }'), 'L4:20 Invalid glob match expression. Only one glob match is permitted in a match declaration path.'],
    [wrap('    match /{a=**}/x/{b} {\n      allow get;\n    }', ''), 'L3:11 Invalid glob match expression. Glob matches are permitted as the last segment in a match declaration path.'],
    [wrap('    function f(x) { return f(x); }\n    match /t/{id} {\n      allow get: if f(1);\n    }'), 'L4:14 Recursive call is not allowed.'],
    [wrap('    function f() { return true; let x = 1; }'), "L4:33 mismatched input 'let' expecting '}'"],
    [wrap('    function f() { let x = 1; }'), "L4:31 Unexpected '}'."],
    [wrap('    function f() { function g() { return 1; } return true; }'), "L4:20 Unexpected 'function'."],
    [`rules_version = '2';\nservice cloud.firestore {\n}`, "L3:1 The 'service' body must contain at least one declaration."],
    ["service cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read; } } }\nrules_version = '2';", "L2:1 Unexpected 'rules_version'."],
    ['', 'L0:0 Rules content empty. Compilation aborted.'],
    [wrap('    match /t/{id} {\n      allow get: if "ab".matches("(a)\\\\1");\n    }'), 'L5:34 Invalid regular expression pattern. Pattern: (a)\\1.'],
    [wrap('    match /t/{id} {\n      allow get: if "ab".matches("a(?=b)");\n    }'), 'L5:34 Invalid regular expression pattern. Pattern: a(?=b).'],
    [wrap('    match /t/{id} {\n      allow get: if 9223372036854775808 > 0;\n    }'), 'L5:21 Invalid number literal 9223372036854775808.'],
    [wrap("    match /t/{id} {\n      allow get: if 'abc == 1;\n    }"), "L5:21 Missing a closing '"],
    [wrap('    match /t/{id} {\n      allow get: if 1 is text;\n    }'), 'L5:21 An unsupported type identifier'],
  ];
  for (const [source, expected] of cases) {
    const error = compileError(source);
    assert.ok(error.message.startsWith(`Error compiling rules:\n${expected}`), `${expected}\n  got: ${error.message}`);
    const [line, column] = /^L(\d+):(\d+)/.exec(expected)!.slice(1).map(Number);
    const first = error.issues.find((issue) => issue.severity === 'ERROR')!;
    assert.deepEqual([first.line, first.column], [line, column]);
  }
});

test('names bound twice in a function: the emulator’s whole answer, warnings included', () => {
  const cases: [string, string][] = [
    [wrap('    function f() {\n      let a = 1;\n      let a = 2;\n      return a == 2;\n    }\n    match /t/{id} {\n      allow get: if f();\n    }'), 'L5:11 Unused variable: a.\nL6:11 The identifier [a] is already bound in the current scope.'],
    [wrap('    function f(a) {\n      let a = 1;\n      return a == 2;\n    }\n    match /t/{id} {\n      allow get: if f(1);\n    }'), 'L4:16 Unused variable: a.\nL5:11 The identifier [a] is already bound in the current scope.'],
    [wrap('    function f(a, a) {\n      return a == 2;\n    }\n    match /t/{id} {\n      allow get: if f(1, 2);\n    }'), 'L4:19 Variable a is already defined.'],
  ];
  for (const [source, expected] of cases) assert.equal(compileError(source).message, `Error compiling rules:\n${expected}`);
});

test('Hearth refuses other services and rulesets over 256 KiB', () => {
  assert.match(compileError('service firebase.storage {\n  match /b/{bucket}/o {\n    allow read;\n  }\n}').message, /^Error compiling rules:\nL1:1 Unsupported service 'firebase.storage'/);
  const big = wrap(`    match /t/{id} { allow get: if true; }\n    // ${'x'.repeat(256 * 1024)}`);
  assert.match(compileError(big).message, /larger than 256 KiB/);
});

test('what the emulator only warns about compiles, with the warning, and fails when evaluated', () => {
  const rules = compileRules(
    wrap('    function f(a) { return true; }\n    match /t/{id} {\n      allow get: if f() || unknownVar == 1 || foo(1);\n      allow reed: if true;\n    }'),
  );
  assert.deepEqual(
    rules.issues.map((issue) => `L${issue.line}:${issue.column} ${issue.severity} ${issue.message}`),
    [
      'L4:16 WARNING Unused variable: a.',
      'L6:21 WARNING Incorrect number of arguments supplied to function: f.',
      'L6:28 WARNING Invalid variable name: unknownVar.',
      'L6:47 WARNING Invalid function name: foo.',
      'L7:13 WARNING Invalid method name: reed.',
    ],
  );
  assert.deepEqual(compileRules(wrap('    match /x/{y} { allow read; }', '')).issues[0], {
    line: 0,
    column: 0,
    message: 'Ruleset uses old version (version [1]). Please update to the latest version (version [2]).',
    severity: 'WARNING',
  });
});

const db = { projectId: 'p', databaseId: '(default)' };
const noReads = { get: async () => undefined, getAfter: async () => undefined };

async function allows(source: string, path: string, method: RulesRequest['method'] = 'get'): Promise<boolean> {
  const decision = await evaluateRules(compileRules(source), { db, method, path, auth: null, time: 0, reader: noReads, budget: { limit: 10, seen: new Set() } });
  return decision.allowed;
}

test('match blocks: exact depth, {x} binds a segment, {x=**} zero or more segments in v2 and one or more in v1', async () => {
  const v2 = wrap(`    match /users/{uid} {
      allow get: if uid == 'u1';
      match /notes/{rest=**} {
        allow get: if rest == /a/b || rest == path('') || string(rest) == '/c';
      }
    }
    match /{prefix=**}/tags/{tag} {
      allow get: if tag == 'ok' && (prefix == path('') || prefix[0] == 'users');
    }`);
  assert.equal(await allows(v2, 'users/u1'), true);
  assert.equal(await allows(v2, 'users/u2'), false);
  assert.equal(await allows(v2, 'users/u1/other/x'), false, 'a match does not cover subcollections');
  assert.equal(await allows(v2, 'users/u9/notes/a/b'), true, 'rest is the path after notes');
  assert.equal(await allows(v2, 'users/u9/notes/a/c'), false);
  assert.equal(await allows(v2, 'users/u9/notes/c'), true);
  assert.equal(await allows(v2, 'tags/ok'), true, '** spans zero segments in version 2');
  assert.equal(await allows(v2, 'users/u1/tags/ok'), true);
  assert.equal(await allows(v2, 'users/u1/tags/no'), false);
  assert.equal(await allows(v2, 'users/u1', 'create'), false, 'read does not grant writes');

  const v1 = wrap(`    match /users/{uid}/{rest=**} {
      allow get: if rest is path && rest == /a/b;
    }
    match /everything/{all=**} { allow write; }`, '');
  assert.equal(await allows(v1, 'users/u1/a/b'), true, 'a glob binds a path in version 1 too (checked on the emulator)');
  assert.equal(await allows(v1, 'everything/x', 'create'), true);
  assert.equal(await allows(v1, 'users/u1'), false, 'a version 1 glob needs at least one segment');

  const literalFirst = wrap(`    match /{coll}/{id} { allow get: if coll == 'a'; }
    match /b/{id} { allow get: if id == 'x'; }`);
  assert.equal(await allows(literalFirst, 'a/1'), true);
  assert.equal(await allows(literalFirst, 'b/x'), true);
  assert.equal(await allows(literalFirst, 'b/y'), false);
});
