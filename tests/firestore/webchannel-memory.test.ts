/**
 * Issue 28, item 8: one anonymous client could exhaust the server's memory over WebChannel. A
 * session kept up to 64M characters of answers the client had not acknowledged, one address could
 * hold 200 sessions, and a back channel the client never read buffered everything written to it.
 * Now what sessions hold is bounded per session, per address and in total (webchannel-budget.ts),
 * and back channels write only as fast as the connection takes it.
 *
 * The attack, bounded, on loopback: from 127.0.0.2, sessions that listen to a collection of large
 * documents, open their back channel and never read it, while the collection keeps changing. A
 * legitimate client (the firebase SDK) keeps reading and writing. The server's memory (this
 * process's heap plus Buffers, after a full collection) may grow by no more than a bound derived
 * from the configured limits; before, it grew with the attack.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectFirestoreEmulator, doc, getDoc, getFirestore, onSnapshot, setDoc, terminate, type Firestore } from 'firebase/firestore';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const limits = { maxQueuedChars: 2 * 1024 * 1024, maxQueuedCharsPerAddress: 4 * 1024 * 1024, maxQueuedCharsTotal: 8 * 1024 * 1024 };
const attacker = '127.0.0.2';
const attackSessions = 40;
const bigDocs = 6;
const bigDocChars = 250_000;
const writeRounds = 6;

let server: TestHearth;
let port: number;
let app: FirebaseApp;
let db: Firestore;
const sockets: Socket[] = [];
const database = () => `projects/${server.projectId}/databases/(default)`;

before(async () => {
  server = await startHearth({ webChannelLimits: limits });
  port = Number(new URL(server.url).port);
  app = initializeApp({ projectId: server.projectId, apiKey: 'any' }, 'webchannel-memory');
  db = getFirestore(app);
  connectFirestoreEmulator(db, '127.0.0.1', port, { mockUserToken: { sub: 'legit' } });
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  await terminate(db);
  await deleteApp(app);
  await server.close();
});

async function writeBigDocs(round: number): Promise<void> {
  const writes = Array.from({ length: bigDocs }, (_, i) => ({
    update: { name: `${database()}/documents/big/d${i}`, fields: { text: { stringValue: `${round}`.padEnd(bigDocChars, String.fromCharCode(97 + ((round + i) % 26))) } } },
  }));
  const answer = await postJson(`${server.url}/v1/${database()}/documents:commit`, { writes }, { authorization: 'Bearer owner' });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

/** A POST from the attacker's address; the answer read whole. */
function postFromAttacker(path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', localAddress: attacker, agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const channelQuery = (params: Record<string, string>) => new URLSearchParams({ VER: '8', database: database(), ...params, zx: 'x', t: '1' }).toString();

/** One attacking session: a Listen of the whole `big` collection, and a back channel it never reads. */
async function openGreedySession(): Promise<boolean> {
  const listen = { database: database(), addTarget: { query: { parent: `${database()}/documents`, structuredQuery: { from: [{ collectionId: 'big' }] } }, targetId: 2 } };
  const body = `count=1&ofs=0&req0___data__=${encodeURIComponent(JSON.stringify(listen))}`;
  const answer = await postFromAttacker(`/google.firestore.v1.Firestore/Listen/channel?${channelQuery({ RID: '1', CVER: '22' })}`, body);
  if (answer.status !== 200) return false;
  const sid = /\["c","([^"]+)"/.exec(answer.text)?.[1];
  assert.ok(sid, answer.text);
  const socket = connect({ host: '127.0.0.1', port, localAddress: attacker });
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.write(`GET /google.firestore.v1.Firestore/Listen/channel?${channelQuery({ RID: 'rpc', SID: sid, AID: '0', CI: '0', TYPE: 'xmlhttp' })} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  socket.pause(); // never read
  return true;
}

function memoryInUse(): number {
  collectGarbage();
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

test('a client that never reads its back channels costs the server a bounded amount while the SDK keeps working', { timeout: 240_000 }, async (t) => {
  await writeBigDocs(0);
  const mine = doc(db, 'rooms/r1');
  await setDoc(mine, { n: 0 });
  const seen: number[] = [];
  const unsubscribe = onSnapshot(mine, (snapshot) => seen.push(snapshot.get('n') as number));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const baseline = memoryInUse();

  let opened = 0;
  for (let i = 0; i < attackSessions; i++) if (await openGreedySession()) opened++;
  assert.ok(opened > 0, 'the attack opened sessions');
  for (let round = 1; round <= writeRounds; round++) {
    await writeBigDocs(round);
    // The legitimate client writes and reads between the attacker's floods.
    await setDoc(mine, { n: round });
    assert.equal((await getDoc(mine)).get('n'), round);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  let peak = 0;
  for (let sample = 0; sample < 3; sample++) {
    peak = Math.max(peak, memoryInUse() - baseline);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  // Kept arrays: at most the total bound, two bytes a character; back channels: at most one
  // 64 Ki-character write (and its connection's buffer) each; and room for the rest of the server.
  const bound = limits.maxQueuedCharsTotal * 2 * 2 + attackSessions * 2 * 64 * 1024 * 2 + 48 * 1024 * 1024;
  t.diagnostic(`${opened} sessions; memory grew by ${(peak / 2 ** 20).toFixed(1)} MiB (bound ${(bound / 2 ** 20).toFixed(1)} MiB)`);
  assert.ok(peak < bound, `memory grew by ${(peak / 2 ** 20).toFixed(1)} MiB under the attack; the limits allow ${(bound / 2 ** 20).toFixed(1)} MiB`);

  // The legitimate listener saw every write.
  const deadline = Date.now() + 30_000;
  while (seen[seen.length - 1] !== writeRounds && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(seen[seen.length - 1], writeRounds);
  unsubscribe();
});
