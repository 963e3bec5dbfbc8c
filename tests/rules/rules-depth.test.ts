/**
 * Rules too deep to compile or to evaluate are refused with Google's compile error (400
 * INVALID_ARGUMENT, `Error compiling rules:\nL<line>:<column> ...`) on every way in: the Rules
 * API, the emulator's `:securityRules`, the console's `rules:check` and a `--rules` file at start;
 * never a 500 or a stack overflow. Rules just inside the bounds compile and judge real requests.
 * Raw HTTP, outside --dev.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
before(async () => {
  server = await startHearth({ dev: false });
});
after(() => server.close());

const admin = () => ({ authorization: `Bearer ${server.adminKey}` });
const head = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n";
const withCondition = (condition: string, functions = '') => `${head}${functions}    match /open/{id} {\n      allow read: if ${condition};\n    }\n  }\n}\n`;

/** Sources the compiler or the evaluator would recurse through too deep, each of a shape a parser nests differently. */
const tooDeep: Record<string, { source: string; message: RegExp }> = {
  brackets: { source: withCondition(`${'('.repeat(5000)}true${')'.repeat(5000)}`), message: /^Error compiling rules:\nL5:\d+ Rules nested too deeply: more than 250 levels of blocks and expressions\.$/ },
  negations: { source: withCondition(`${'!'.repeat(20000)}true`), message: /^Error compiling rules:\nL5:\d+ Rules nested too deeply/ },
  'a chain of operators': { source: withCondition(Array(3000).fill('true').join(' && ')), message: /^Error compiling rules:\nL5:\d+ Rules nested too deeply/ },
  'a chain of members': { source: withCondition(`request${'.a'.repeat(5000)} == 1`), message: /^Error compiling rules:\nL5:\d+ Rules nested too deeply/ },
  lists: { source: withCondition(`${'['.repeat(5000)}${']'.repeat(5000)} == []`), message: /^Error compiling rules:\nL5:\d+ Rules nested too deeply/ },
  'match blocks': {
    source: `${head}${'    match /a {\n'.repeat(3000)}      allow read;\n${'    }\n'.repeat(3000)}  }\n}\n`,
    message: /^Error compiling rules:\nL253:5 Rules nested too deeply/,
  },
  // Each expression is shallow, but a let reads the one before it and each function calls the next:
  // evaluating them nests it all (20 functions of 100 lets overflowed the stack of the request judged).
  'lets through function calls': {
    source: withCondition('f0() == 1', letChains(20, 100)),
    message: /^Error compiling rules:\nL\d+:\d+ Function f\d+ nests too deeply when evaluated: more than 500 levels through its let bindings and the functions it calls\.$/,
  },
  // A 256 KiB source holds thousands of functions calling one another.
  'a chain of 7000 functions': {
    source: withCondition('f0()', Array.from({ length: 7000 }, (_, i) => `function f${i}() { return ${i < 6999 ? `f${i + 1}()` : 'true'}; }\n`).join('')),
    message: /^Error compiling rules:\nL\d+:\d+ Function f\d+ nests too deeply when evaluated/,
  },
};

/** `fns` functions, each a chain of `lets` lets (each reading the one before) whose first calls the next function. */
function letChains(fns: number, lets: number): string {
  let out = '';
  for (let f = 0; f < fns; f++) {
    out += `    function f${f}() {\n`;
    for (let i = 0; i < lets; i++) out += `      let a${i} = ${i === 0 ? (f + 1 < fns ? `f${f + 1}()` : '1') : `a${i - 1}`};\n`;
    out += `      return a${lets - 1};\n    }\n`;
  }
  return out;
}

const rulesFile = (content: string) => ({ files: [{ name: 'firestore.rules', content }] });

describe('too deep: the same compile error on every way in', () => {
  for (const [shape, { source, message }] of Object.entries(tooDeep)) {
    test(shape, async () => {
      const created = await postJson(`${server.url}/firebaserules.googleapis.com/v1/projects/${server.projectId}/rulesets`, { source: rulesFile(source) }, admin());
      assert.equal(created.status, 400, JSON.stringify(created.body).slice(0, 300));
      assert.equal(created.body.error.status, 'INVALID_ARGUMENT');
      assert.match(created.body.error.message, message);

      const put = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, {
        method: 'PUT',
        headers: { ...admin(), 'content-type': 'application/json' },
        body: JSON.stringify({ rules: rulesFile(source) }),
      });
      const putBody = (await put.json()) as { error: { status: string; message: string } };
      assert.equal(put.status, 400);
      assert.deepEqual([putBody.error.status, putBody.error.message], [created.body.error.status, created.body.error.message]);

      const checked = await postJson(`${server.url}/hearth/v1/console/projects/${server.projectId}/databases/(default)/rules:check`, { source }, admin());
      assert.equal(checked.status, 200, JSON.stringify(checked.body).slice(0, 300));
      const errors = (checked.body.issues as Array<{ line: number; column: number; message: string; severity: string }>).filter((issue) => issue.severity === 'ERROR');
      assert.equal(errors.length, 1, JSON.stringify(checked.body.issues).slice(0, 300));
      assert.equal(`Error compiling rules:\nL${errors[0]!.line}:${errors[0]!.column} ${errors[0]!.message}`, created.body.error.message);
    });
  }

  test('a --rules file: the start is refused with the error, no stack overflow', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hearth-rules-depth-'));
    try {
      const file = join(dir, 'firestore.rules');
      writeFileSync(file, tooDeep.brackets!.source);
      await assert.rejects(startHearth({ dev: false, rulesFile: file }), (error: Error) => {
        assert.match(error.message, tooDeep.brackets!.message);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('just inside the bounds', () => {
  test('compiles, is released, and judges real requests', async () => {
    // 240 brackets deep, and functions whose lets nest close to the evaluation bound.
    const deepTrue = `${'('.repeat(240)}true${')'.repeat(240)}`;
    const source = withCondition(`${deepTrue} && f0() == 1`, letChains(9, 50));
    const put = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, {
      method: 'PUT',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ rules: rulesFile(source) }),
    });
    assert.equal(put.status, 200, await put.text());
    // An anonymous read is judged by those rules: allowed, the document does not exist.
    const read = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/open/a`);
    assert.equal(read.status, 404, await read.text());
    const closed = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/closed/a`);
    assert.equal(closed.status, 403);
  });
});
