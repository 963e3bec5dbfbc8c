/**
 * Issue 14, part A: metrics. `/metrics` is Prometheus text from prom-client (requests by route
 * template and status, latency histogram, sign-ins by method and failed ones, commits and
 * documents written, Listen targets, gRPC streams, WebChannel sessions, store size), for the admin
 * credential or the console session only; `/hearth/v1/console/metrics` is the sampled series the
 * console plots. Driven by real calls: the REST identity API, firebase-admin over gRPC.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
before(async () => {
  server = await startHearth({ dev: true, metricsIntervalMs: 100 });
});
after(async () => server.close());

async function scrape(headers: Record<string, string> = { authorization: `Bearer ${server.adminKey}` }): Promise<{ status: number; text: string; type: string }> {
  const response = await fetch(`${server.url}/metrics`, { headers });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') ?? '' };
}

/** The value of one series (name plus exact label text), 0 when absent. */
function valueOf(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function series(name: string): Promise<number> {
  return valueOf((await scrape()).text, name);
}

const poll = async (check: () => Promise<boolean>, what: string) => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
};

describe('/metrics', () => {
  test('Prometheus text format with every metric family named in the issue', async () => {
    const { status, text, type } = await scrape();
    assert.equal(status, 200);
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    for (const family of [
      'hearth_http_requests_total',
      'hearth_http_request_duration_seconds',
      'hearth_sign_ins_total',
      'hearth_sign_ins_failed_total',
      'hearth_firestore_commits_total',
      'hearth_firestore_documents_written_total',
      'hearth_firestore_listen_targets',
      'hearth_webchannel_sessions',
      'hearth_grpc_streams',
      'hearth_store_bytes',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${family} `, 'm'), family);
    }
    assert.ok(valueOf(text, 'hearth_store_bytes') > 0, 'the SQLite file has a size');
  });

  test('requests are counted by route template and status, never by raw URL', async () => {
    await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/things/some-unique-id-123`, { headers: { authorization: 'Bearer owner' } });
    const { text } = await scrape();
    assert.ok(!text.includes('some-unique-id-123'), 'ids never become labels');
    assert.ok(valueOf(text, 'hearth_http_requests_total{route="/v1/projects/:project/databases/:database/*",method="GET",status="404"}') >= 1, text.split('\n').filter((l) => l.includes('databases')).join('\n'));
    assert.match(text, /hearth_http_request_duration_seconds_bucket\{le="0.005",route="\/v1\/projects\/:project\/databases\/:database\/\*"\}/);
  });

  // Requests are tallied on the request path and added to prom-client's counter when it is read
  // (http/metrics.ts): every request counts exactly once, across scrapes, per status.
  test('the request count moves by exactly the requests answered between two scrapes', async () => {
    const series = (status: number) => `hearth_http_requests_total{route="/healthz",method="GET",status="${status}"}`;
    const before = valueOf((await scrape()).text, series(200));
    for (let i = 0; i < 7; i++) assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const middle = valueOf((await scrape()).text, series(200));
    assert.equal(middle - before, 7);
    for (let i = 0; i < 5; i++) await fetch(`${server.url}/healthz`);
    const { text } = await scrape();
    assert.equal(valueOf(text, series(200)) - middle, 5);
    assert.equal(valueOf(text, series(404)), 0);
    assert.match(text, /hearth_http_request_duration_seconds_count\{route="\/healthz"\} \d+/);
  });

  test('sign-ins by method and failed sign-ins move with real sign-ins', async () => {
    const email = uniqueEmail('metrics');
    assert.equal((await adminPost(server, '/accounts', { email, password: 'secret-123456' })).status, 200);
    const ok = 'hearth_sign_ins_total{method="password"}';
    const failed = 'hearth_sign_ins_failed_total{method="password"}';
    const [okBefore, failedBefore] = [await series(ok), await series(failed)];
    const signIn = (password: string) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password, returnSecureToken: true });
    assert.equal((await signIn('secret-123456')).status, 200);
    assert.equal((await signIn('wrong-password')).status, 400);
    assert.equal((await signIn('wrong-again')).status, 400);
    assert.equal(await series(ok), okBefore + 1);
    assert.equal(await series(failed), failedBefore + 2);
    const anonymous = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, { returnSecureToken: true });
    assert.equal(anonymous.status, 200);
    assert.ok((await series('hearth_sign_ins_total{method="signUp"}')) >= 1);
  });

  test('commits and documents written, Listen targets and gRPC streams follow firebase-admin over gRPC', async () => {
    const saved = process.env.FIRESTORE_EMULATOR_HOST;
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    const app = initializeApp({ projectId: server.projectId }, `metrics-${Date.now()}`);
    const db = getFirestore(app);
    let deleted = false;
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
    try {
      const [commitsBefore, docsBefore, targetsBefore, streamsBefore] = [
        await series('hearth_firestore_commits_total'),
        await series('hearth_firestore_documents_written_total'),
        await series('hearth_firestore_listen_targets'),
        await series('hearth_grpc_streams'),
      ];
      const batch = db.batch();
      batch.set(db.doc('metrics/a'), { n: 1 });
      batch.set(db.doc('metrics/b'), { n: 2 });
      await batch.commit();
      assert.equal(await series('hearth_firestore_commits_total'), commitsBefore + 1);
      assert.equal(await series('hearth_firestore_documents_written_total'), docsBefore + 2);
      let seen = 0;
      const unsubscribe = db.collection('metrics').onSnapshot((snapshot) => (seen = snapshot.size));
      await poll(async () => seen === 2, 'the listener saw both documents');
      assert.equal(await series('hearth_firestore_listen_targets'), targetsBefore + 1);
      assert.equal(await series('hearth_grpc_streams'), streamsBefore + 1);
      unsubscribe();
      await poll(async () => (await series('hearth_firestore_listen_targets')) === targetsBefore, 'the target went with the listener');
      deleted = true;
      await deleteApp(app);
      await poll(async () => (await series('hearth_grpc_streams')) === streamsBefore, 'the stream ended with the app');
    } finally {
      if (!deleted) await deleteApp(app);
    }
  });

  test('only the admin credential or the console session: nobody 401, a wrong key 401, another site 403', async () => {
    assert.equal((await scrape({})).status, 401);
    assert.equal((await scrape({ authorization: 'Bearer wrong-key' })).status, 401);
    assert.equal((await scrape({ authorization: `Bearer ${server.adminKey}`, origin: 'http://evil.example' })).status, 403);
    assert.equal((await scrape({ authorization: `Bearer ${server.adminKey}`, 'sec-fetch-site': 'cross-site' })).status, 403);
    const unauthorized = await scrape({});
    assert.equal(JSON.parse(unauthorized.text).error.status, 'UNAUTHENTICATED');
    const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
    assert.equal(session.status, 200);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.equal((await scrape({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin' })).status, 200);
    assert.equal((await scrape({ cookie, 'sec-fetch-site': 'same-origin' })).status, 403);
    assert.equal((await scrape({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'cross-site' })).status, 403);
    const cors = await fetch(`${server.url}/metrics`, { headers: { origin: 'http://evil.example', authorization: `Bearer ${server.adminKey}` } });
    assert.equal(cors.headers.get('access-control-allow-origin'), null, 'no CORS for /metrics');
  });

  test('a flood of scrapes is answered, never a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => scrape()));
    assert.ok(answers.every((answer) => answer.status === 200));
  });
});

describe('/hearth/v1/console/metrics', () => {
  const url = (query = '') => `${server.url}/hearth/v1/console/metrics${query}`;
  const get = async (query = '') => {
    const response = await fetch(url(query), { headers: { authorization: `Bearer ${server.adminKey}` } });
    return { status: response.status, body: (await response.json()) as any };
  };

  test('samples every interval with the contract fields; requests and commits show as rates', async () => {
    const start = Date.now();
    await Promise.all(Array.from({ length: 30 }, () => fetch(`${server.url}/healthz`)));
    await poll(async () => (await get(`?since=${start}`)).body.samples.some((sample: any) => sample.requestsPerSec > 0), 'a sample with requests');
    const { status, body } = await get();
    assert.equal(status, 200);
    assert.equal(body.intervalMs, 100);
    const last = body.samples.at(-1);
    for (const field of ['at', 'requestsPerSec', 'errorsPerSec', 'p50Ms', 'p99Ms', 'signInsPerMin', 'failedSignInsPerMin', 'commitsPerSec', 'listeners', 'webChannelSessions', 'rssMb']) {
      assert.equal(typeof last[field], 'number', field);
    }
    assert.ok(last.rssMb > 10);
    const times = body.samples.map((sample: any) => sample.at);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'oldest first');
    const recent = await get(`?since=${times.at(-2)}`);
    assert.ok(recent.body.samples.every((sample: any) => sample.at > times.at(-2)));
  });

  test('failed sign-ins show per minute and errors per second', async () => {
    const start = Date.now();
    for (let i = 0; i < 3; i++) await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email: 'nobody@example.com', password: 'nope-nope', returnSecureToken: true });
    await poll(async () => (await get(`?since=${start}`)).body.samples.some((sample: any) => sample.failedSignInsPerMin > 0 && sample.errorsPerSec > 0), 'failed sign-ins in a sample');
  });

  test('bad parameters are 400; no credential 401; another site 403', async () => {
    for (const query of ['?since=abc', '?since=-1', '?since=1.5', '?since=1&since=2', '?limit=3', `?since=${'9'.repeat(30)}`]) {
      const answer = await get(query);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
    assert.equal((await fetch(url())).status, 401);
    assert.equal((await fetch(url(), { headers: { authorization: `Bearer ${server.adminKey}`, origin: 'http://evil.example' } })).status, 403);
  });
});
