/**
 * Firestore crash safety: what a commit acknowledged survives `kill -9`, and a commit is never
 * half applied. Each commit writes two documents (`burst/a-N` and `burst/b-N`) so a torn commit
 * shows up as one without the other. Plain REST with `Bearer owner` (an administrator in --dev).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test, type TestContext } from 'node:test';
import { freePort, spawnHearth, tempDataDir } from '../helpers/hearth.js';

const PROJECT = 'demo-durable';
const DATABASE = `projects/${PROJECT}/databases/(default)`;
const OWNER = { authorization: 'Bearer owner', 'content-type': 'application/json' };

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function startOn(dataDir: string, port: number) {
  return spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--project', PROJECT, '--log-level', 'warn']);
}

/** POSTs to `{url}/v1/{DATABASE}/documents{suffix}` with a deadline; returns status and parsed body. */
async function firestorePost(url: string, suffix: string, body: unknown, timeoutMs = 15_000): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/v1/${DATABASE}/documents${suffix}`, {
    method: 'POST',
    headers: OWNER,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/**
 * One commit writing burst/a-{n} and burst/b-{n}, both with field n (and, with `padding`, a text
 * of that many characters each: commits over 512 KiB are written by the SQLite writer thread).
 */
function pairCommit(n: number, padding = 0) {
  const fields = { n: { integerValue: String(n) }, ...(padding ? { text: { stringValue: `${n} `.padEnd(padding, 'lorem ipsum ') } } : {}) };
  return {
    writes: [
      { update: { name: `${DATABASE}/documents/burst/a-${n}`, fields } },
      { update: { name: `${DATABASE}/documents/burst/b-${n}`, fields } },
    ],
  };
}

/** Every document of collection `burst`, by name (the last path segment) → its field n. */
async function readBurst(url: string): Promise<Map<string, number>> {
  const result = await firestorePost(url, ':runQuery', { structuredQuery: { from: [{ collectionId: 'burst' }], select: { fields: [{ fieldPath: 'n' }] } } }, 60_000);
  assert.equal(result.status, 200, JSON.stringify(result.body).slice(0, 500));
  assert.ok(Array.isArray(result.body), 'runQuery answers a JSON array');
  const found = new Map<string, number>();
  for (const element of result.body as Array<{ document?: { name: string; fields?: { n?: { integerValue?: string } } } }>) {
    if (!element.document) continue;
    const id = element.document.name.split('/').pop()!;
    found.set(id, Number(element.document.fields?.n?.integerValue));
  }
  return found;
}

/** batchGet of the given document ids in `burst`: the ids found. */
async function batchGetBurst(url: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 200) {
    const chunk = ids.slice(i, i + 200);
    const result = await firestorePost(url, ':batchGet', { documents: chunk.map((id) => `${DATABASE}/documents/burst/${id}`), mask: { fieldPaths: ['n'] } }, 60_000);
    assert.equal(result.status, 200, JSON.stringify(result.body).slice(0, 500));
    assert.ok(Array.isArray(result.body), 'batchGet answers a JSON array');
    assert.equal(result.body.length, chunk.length, 'batchGet answers once per requested document');
    for (const element of result.body as Array<{ found?: { name: string }; missing?: string }>) {
      if (element.found) found.add(element.found.name.split('/').pop()!);
    }
  }
  return found;
}

/** The commit numbers whose two documents disagree (one there, the other not, or different n). */
function tornCommits(documents: Map<string, number>): string[] {
  const torn: string[] = [];
  const numbers = new Set<string>();
  for (const id of documents.keys()) numbers.add(id.slice(2));
  for (const n of numbers) {
    const a = documents.get(`a-${n}`);
    const b = documents.get(`b-${n}`);
    if (a === undefined || b === undefined || a !== Number(n) || b !== Number(n)) torn.push(`${n} (a=${a}, b=${b})`);
  }
  return torn;
}

test('a clean shutdown (SIGTERM) keeps committed documents', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const first = await startOn(dataDir, port);
  try {
    const committed = await firestorePost(first.url, ':commit', pairCommit(1));
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
    assert.equal(committed.body.writeResults?.length, 2);
  } finally {
    assert.equal(await first.stop('SIGTERM'), 0, first.output());
  }
  const second = await startOn(dataDir, port);
  try {
    const documents = await readBurst(second.url);
    assert.deepEqual([...documents.entries()].sort(), [
      ['a-1', 1],
      ['b-1', 1],
    ]);
  } finally {
    await second.stop();
  }
});

async function killDuringBurst(t: TestContext, shape: { clients: number; commits: number; padding: number }): Promise<void> {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const server = await startOn(dataDir, port);
  const acknowledged: number[] = [];
  const refused: string[] = [];
  let cutOff = 0;
  let next = 0;
  let running = true;
  const worker = async () => {
    while (running) {
      const n = next++;
      try {
        const response = await firestorePost(server.url, ':commit', pairCommit(n, shape.padding));
        if (response.status === 200 && response.body?.writeResults?.length === 2) acknowledged.push(n);
        else if (running) refused.push(`${n}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
      } catch {
        cutOff++;
        return; // the connection died with the server: that commit was never acknowledged
      }
    }
  };
  const workers = Array.from({ length: shape.clients }, () => worker());
  const deadline = Date.now() + 30_000;
  while (acknowledged.length < shape.commits && refused.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  server.child.kill('SIGKILL');
  running = false;
  await Promise.all(workers);
  await server.stop();
  assert.deepEqual(refused, [], 'commits were refused before the kill');
  assert.ok(acknowledged.length >= shape.commits, `only ${acknowledged.length} commits were acknowledged before the kill`);

  const restarted = await startOn(dataDir, port);
  try {
    const documents = await readBurst(restarted.url);
    t.diagnostic(`${acknowledged.length} commits acknowledged, ${cutOff} cut off by the kill, ${documents.size / 2} found after the restart`);
    const lost = acknowledged.filter((n) => documents.get(`a-${n}`) !== n || documents.get(`b-${n}`) !== n);
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged commits are missing after the restart`);
    assert.deepEqual(tornCommits(documents), [], 'commits applied in part');

    const wanted = acknowledged.flatMap((n) => [`a-${n}`, `b-${n}`]);
    const fetched = await batchGetBurst(restarted.url, wanted);
    assert.deepEqual(
      wanted.filter((id) => !fetched.has(id)),
      [],
      'acknowledged documents batchGet does not find',
    );
    // commits that were in flight at the kill: all or nothing, and nothing that was never sent
    for (const id of documents.keys()) assert.ok(Number(id.slice(2)) < next, `${id} was never written`);
  } finally {
    await restarted.stop();
  }
}

test('kill -9 during a burst of two-document commits loses no acknowledged commit and tears none', { timeout: 180_000 }, (t) =>
  killDuringBurst(t, { clients: 8, commits: 100, padding: 0 }),
);

test('kill -9 during a burst of 600 KB commits (written by the SQLite writer thread) loses no acknowledged commit and tears none', { timeout: 180_000 }, (t) =>
  killDuringBurst(t, { clients: 4, commits: 30, padding: 300_000 }),
);
