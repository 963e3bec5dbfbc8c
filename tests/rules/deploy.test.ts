/**
 * Deploying security rules: `--rules FILE` (released at start, reloaded when the file changes, a
 * broken file keeps the rules in force), the Firebase Rules API's history (every ruleset kept, a
 * release pointed back at an older one), and the emulator endpoint's answers for broken rules.
 * Raw HTTP against Hearth in production mode.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const rulesOpenTo = (collection: string) => `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /${collection}/{id} {
      allow read, write: if request.auth != null;
    }
  }
}
`;

let server: TestHearth;
let token: string;
let rulesFile: string;
let scratch: string;
const logLines: string[] = [];

const rulesApi = () => `${server.url}/firebaserules.googleapis.com/v1/projects/${server.projectId}`;
const admin = () => ({ authorization: `Bearer ${server.adminKey}` });

async function readAs(path: string): Promise<number> {
  const response = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/${path}`, { headers: { authorization: `Bearer ${token}` } });
  return response.status;
}

/** Polls until `path` answers `status` to the user (the file watcher takes up to a second or so). */
async function eventually(path: string, status: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let last = 0;
  while (Date.now() < deadline) {
    last = await readAs(path);
    if (last === status) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(last, status, `${path} never answered ${status}`);
}

async function rulesetCount(): Promise<number> {
  const response = await fetch(`${rulesApi()}/rulesets`, { headers: admin() });
  assert.equal(response.status, 200);
  return ((await response.json()) as { rulesets: unknown[] }).rulesets.length;
}

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hearth-rules-file-'));
  rulesFile = join(scratch, 'firestore.rules');
  writeFileSync(rulesFile, rulesOpenTo('first'));
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  server = await startHearth({ dev: false, rulesFile }, pino({ level: 'info' }, capture));
  const signUp = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, { returnSecureToken: true });
  token = signUp.body.idToken;
});

after(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('--rules FILE', () => {
  test('is in force from the start', async () => {
    assert.equal(await readAs('first/a'), 404);
    assert.equal(await readAs('second/a'), 403);
  });

  test('is released again when the file changes', async () => {
    writeFileSync(rulesFile, rulesOpenTo('second'));
    await eventually('second/a', 404);
    assert.equal(await readAs('first/a'), 403);
  });

  test('a broken file keeps the rules in force and logs the error with its line and column', async () => {
    const before = await rulesetCount();
    writeFileSync(rulesFile, `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /third/{id} { allow read: if request.auth != ; }\n  }\n}\n`);
    const deadline = Date.now() + 10_000;
    while (!logLines.some((line) => line.includes('security rules not reloaded')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const logged = logLines.find((line) => line.includes('security rules not reloaded'));
    assert.ok(logged, 'the broken file was logged');
    assert.match(logged, /L4:\d+/);
    assert.equal(await readAs('second/a'), 404);
    assert.equal(await readAs('third/a'), 403);
    assert.equal(await rulesetCount(), before);
  });

  test('a restart with the same file does not grow the history', async () => {
    writeFileSync(rulesFile, rulesOpenTo('second'));
    const dataDir = tempDataDir();
    const first = await startHearth({ dev: false, rulesFile, dataDir });
    await first.close();
    const again = await startHearth({ dev: false, rulesFile, dataDir });
    try {
      const response = await fetch(`${again.url}/firebaserules.googleapis.com/v1/projects/${again.projectId}/rulesets`, { headers: { authorization: `Bearer ${again.adminKey}` } });
      assert.equal(((await response.json()) as { rulesets: unknown[] }).rulesets.length, 1);
    } finally {
      await again.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the Firebase Rules API', () => {
  test('every ruleset is kept; a release can be pointed back at an older one; deleting it closes the database', async () => {
    const created = await postJson(`${rulesApi()}/rulesets`, { source: { files: [{ name: 'firestore.rules', content: rulesOpenTo('fourth') }] } }, admin());
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const listed = (await (await fetch(`${rulesApi()}/rulesets`, { headers: admin() })).json()) as { rulesets: Array<{ name: string }> };
    assert.equal(listed.rulesets[0]!.name, created.body.name);
    const current = (await (await fetch(`${rulesApi()}/releases/cloud.firestore`, { headers: admin() })).json()) as { rulesetName: string };
    const moved = await fetch(`${rulesApi()}/releases/cloud.firestore`, {
      method: 'PATCH',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ release: { name: `projects/${server.projectId}/releases/cloud.firestore`, rulesetName: created.body.name } }),
    });
    assert.equal(moved.status, 200);
    assert.equal(await readAs('fourth/a'), 404);
    assert.equal(await readAs('second/a'), 403);
    const back = await fetch(`${rulesApi()}/releases/cloud.firestore`, {
      method: 'PATCH',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ release: { name: `projects/${server.projectId}/releases/cloud.firestore`, rulesetName: current.rulesetName } }),
    });
    assert.equal(back.status, 200);
    assert.equal(await readAs('second/a'), 404);
    const inUse = await fetch(`${server.url}/firebaserules.googleapis.com/v1/${current.rulesetName}`, { method: 'DELETE', headers: admin() });
    assert.equal(inUse.status, 400);
    assert.equal((await fetch(`${rulesApi()}/releases/cloud.firestore`, { method: 'DELETE', headers: admin() })).status, 200);
    assert.equal(await readAs('second/a'), 403);
  });

  test('release names with stray escapes answer 404 in Google\'s shape, never a 500', async () => {
    for (const name of ['%25', 'a%25zz', '%2525']) {
      const response = await fetch(`${rulesApi()}/releases/${name}`, { headers: admin() });
      assert.equal(response.status, 404, name);
      assert.equal(((await response.json()) as { error: { status: string } }).error.status, 'NOT_FOUND', name);
    }
  });

  test('refuses callers without the admin credential and broken sources', async () => {
    assert.equal((await fetch(`${rulesApi()}/rulesets`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
    const broken = await postJson(`${rulesApi()}/rulesets`, { source: { files: [{ name: 'firestore.rules', content: 'service cloud.firestore { match /x { allow read: if true } ' }] } }, admin());
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.status, 'INVALID_ARGUMENT');
    const huge = await postJson(`${rulesApi()}/rulesets`, { source: { files: [{ name: 'firestore.rules', content: `// ${'x'.repeat(300 * 1024)}` }] } }, admin());
    assert.equal(huge.status, 400);
    const unknownField = await postJson(`${rulesApi()}/rulesets`, { source: { files: [{ name: 'f', content: rulesOpenTo('x'), extra: 1 }] } }, admin());
    assert.equal(unknownField.status, 400);
  });
});

describe("the emulator's endpoint", () => {
  test('broken rules: 400 with the issues, or with ignore_errors the issues as data; the rules in force stay', async () => {
    const source = `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /x/{id} { allow read: if ; }\n  }\n}\n`;
    const put = (body: unknown) =>
      fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, { method: 'PUT', headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const refused = await put({ rules: { files: [{ name: 'firestore.rules', content: source }] } });
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /^Error compiling rules:\nL4:\d+ /);
    const told = await put({ rules: { files: [{ name: 'firestore.rules', content: source }] }, ignore_errors: true });
    assert.equal(told.status, 200);
    const { issues } = (await told.json()) as { issues: Array<{ sourcePosition: { line: number }; severity: string }> };
    assert.ok(issues.some((issue) => issue.sourcePosition.line === 4 && issue.severity === 'ERROR'), JSON.stringify(issues));
    for (const hostile of ['', '[]', '{"rules":{"files":[]}}', '{"rules":{"files":[{"content":7}]}}', '{"rules":"x"}']) {
      const answer = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, { method: 'PUT', headers: { ...admin(), 'content-type': 'application/json' }, body: hostile });
      assert.equal(answer.status, 400, hostile);
      assert.equal(((await answer.json()) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT', hostile);
    }
    const released = await put({ rules: { files: [{ content: rulesOpenTo('fifth') }] } });
    assert.equal(released.status, 200);
    assert.deepEqual(await released.json(), {});
    assert.equal(await readAs('fifth/a'), 404);
    assert.equal(await readAs('second/a'), 403);
  });
});

describe("the emulator's endpoints in --dev and outside it", () => {
  test('open in --dev to local tools (no credential, as @firebase/rules-unit-testing sends), never to pages on other origins; admin-only outside --dev', async () => {
    const dev = await startHearth();
    try {
      const clear = (target: TestHearth, headers: Record<string, string>) =>
        fetch(`${target.url}/emulator/v1/projects/${target.projectId}/databases/(default)/documents`, { method: 'DELETE', headers });
      const putRules = (target: TestHearth, headers: Record<string, string>) =>
        fetch(`${target.url}/emulator/v1/projects/${target.projectId}:securityRules`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ rules: { files: [{ content: rulesOpenTo('any') }] } }),
        });
      assert.equal((await clear(dev, {})).status, 200);
      assert.equal((await putRules(dev, {})).status, 200);
      const foreign = { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' };
      assert.equal((await clear(dev, foreign)).status, 403);
      assert.equal((await putRules(dev, foreign)).status, 403);
      assert.equal((await clear(server, {})).status, 403);
      assert.equal((await clear(server, { authorization: `Bearer ${token}` })).status, 403);
      assert.equal((await clear(server, admin())).status, 200);
    } finally {
      await dev.close();
    }
  });
});
