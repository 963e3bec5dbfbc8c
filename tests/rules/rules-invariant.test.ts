/**
 * The rules invariant on listeners (issue 28): every document version that leaves Hearth on a Listen stream is
 * allowed to that caller by the rules in force, judged on that exact version, and every listener ends where
 * Google's emulator's ends. A generated corpus (tests/helpers/invariant-world.ts) runs round by round on Hearth
 * (production mode, ID tokens Hearth signed) and on the emulator (the oracle; unsigned tokens with the same uids
 * and claims): the same ruleset, the same documents, the same writes made by the administrator while every
 * caller listens to every query and document of the round through
 *   - raw Listen streams over gRPC and over WebChannel (every message recorded as sent),
 *   - the official `firebase` v12 SDK's Node build (gRPC) and browser build (WebChannel, in Node): what each
 *     snapshot shows the app, and every Listen message the SDK logs it received, including across its own
 *     reconnects (taken offline while writes happen, then online: it resumes with its resume tokens),
 *   - the server SDK's onSnapshot (@google-cloud/firestore, gRPC) with the caller's ID token,
 *   - resumes: new streams adding the same targets with the resume token or the read time of the round's start.
 * Every document a message carries (with targetIds or removedTargetIds) is judged; at the end of a round each SDK
 * listener's state on Hearth must equal the same listener's on the emulator.
 *
 * The judge itself (tests/helpers/invariant-rules.ts) is checked here first, on every document of each round as
 * seeded and as the writes leave it, for every caller: its get and list verdicts against the emulator's (a GET, a
 * query naming the document, a `verify` write) and Hearth's evaluator's.
 *
 * INVARIANT_SEED=N replays a run (the seed is printed); INVARIANT_SCALE=N runs N times the rounds (soak).
 * HEARTH_TEST_BACKEND=postgres runs Hearth on PostgreSQL. Skipped without gcloud's Firestore emulator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findCloudSdkWithFirestoreEmulator } from '../helpers/firestore-emulator.js';
import { AdminSdkListeners } from '../helpers/invariant-admin-listen.js';
import { crossCheck, describeDisagreement, type CrossCheck } from '../helpers/invariant-crosscheck.js';
import { History, Ledger } from '../helpers/invariant-ledger.js';
import { RawListen, type TargetSpec } from '../helpers/invariant-listen.js';
import { rulesSource } from '../helpers/invariant-rules.js';
import { describeState, SdkClient, type SdkListenerState } from '../helpers/invariant-sdk.js';
import { commitAsAdmin, releaseRules, startInvariantEmulator, startInvariantHearth, writeMark, type InvariantServer } from '../helpers/invariant-servers.js';
import { callerNames, corpusSeed, generateCorpus, type CallerName, type DocData, type Round } from '../helpers/invariant-world.js';
import { testBackend } from '../helpers/test-backend.js';

const skip = !findCloudSdkWithFirestoreEmulator() && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator)';
const seed = corpusSeed();
const rounds = generateCorpus(seed);
const ledger = new Ledger(seed);
const judged: CrossCheck = { verdicts: 0, disagreements: [] };
let hearth: InvariantServer;
let emulator: InvariantServer;

/** Writes per stretch: after each, resumes are tried and SDK clients that were offline come back. */
const stretches = 3;

describe(`rules invariant on listeners (seed ${seed}, ${testBackend}; INVARIANT_SEED=${seed} replays it)`, { skip }, () => {
  before(async () => {
    const [h, e] = await Promise.all([startInvariantHearth(rounds), startInvariantEmulator()]);
    hearth = h;
    if (!e) throw new Error('the Firestore emulator did not start');
    emulator = e;
  });
  after(async () => {
    console.log(
      `rules invariant on listeners, ${testBackend}: ${rounds.length} round(s), ${rounds.reduce((n, round) => n + round.seed.size + round.writes.length, 0)} document write(s) per server; ` +
        `the judge checked on ${judged.verdicts} verdict(s), ${judged.disagreements.length} disagreement(s)\n${ledger.summary()}`,
    );
    await Promise.all([hearth?.close(), emulator?.close()]);
  });

  for (const round of rounds) {
    test(`round ${round.index}: listeners receive only versions their caller may read, and end as the emulator's`, { timeout: 600_000 }, async () => {
      const before = ledger.breaches.length;
      const disagreementsBefore = judged.disagreements.length;
      await runRound(round);
      const disagreements = judged.disagreements.slice(disagreementsBefore);
      assert.deepEqual(disagreements.map(describeDisagreement), [], `round ${round.index}: the judge is not to be trusted here:\n${rulesSource(round.rules, round.names)}`);
      const local = new Ledger(seed);
      local.breaches.push(...ledger.breaches.slice(before));
      assert.equal(local.breaches.length, 0, `round ${round.index} (seed ${seed}):\n${rulesSource(round.rules, round.names)}\n${local.report()}`);
    });
  }
});

interface Listening {
  raw: RawListen[];
  /** The firebase SDK's clients (both builds) and the server SDK's, on Hearth. */
  hearthSdk: Array<SdkClient | AdminSdkListeners>;
  emulatorSdk: Map<CallerName, SdkClient>;
  /**
   * A Hearth SDK client that was offline while the emulator's listener ended (a document denied for a while) never
   * saw that denial: it resumes where the target is when it comes back. Its oracle for that listener is then a new
   * listener on the emulator opened as it comes back (by listener index).
   */
  standIns: Map<SdkClient, Map<number, SdkListenerState>>;
}

function targetsOf(round: Round): TargetSpec[] {
  return [...round.queries.map((query, i) => ({ targetId: i + 1, query })), ...round.documents.map((document, i) => ({ targetId: 100 + i, document }))];
}

async function runRound(round: Round): Promise<void> {
  const source = rulesSource(round.rules, round.names);
  await Promise.all([releaseRules(hearth, source), releaseRules(emulator, source)]);
  const history = new History();
  const seedWrites = [...round.seed].map(([path, data]) => ({ kind: 'set' as const, path, data }));
  const started = await commitAsAdmin(hearth, seedWrites);
  history.apply(started, seedWrites);
  await commitAsAdmin(emulator, seedWrites);
  await crossCheck(emulator, round, round.seed, judged);

  const listening = await listen(round);
  let marks = 0;
  const settle = async () => {
    const mark = `m${++marks}`;
    await Promise.all([writeMark(hearth, round, mark), writeMark(emulator, round, mark)]);
    await caughtUp(round, listening, mark);
  };
  try {
    await settle();
    // The round's first read times and resume tokens, per caller (from its gRPC stream): what resumes start from.
    const resumeFrom = new Map(callerNames.map((caller) => [caller, listening.raw.find((raw) => raw.caller === caller && raw.kind === 'grpc')!]));
    const per = Math.ceil(round.writes.length / stretches);
    for (let stretch = 0; stretch * per < round.writes.length; stretch++) {
      // Half the SDK clients go offline for the stretch: they resume when they come back.
      const away = listening.hearthSdk.filter((client, i): client is SdkClient => client instanceof SdkClient && i % 2 === stretch % 2);
      await Promise.all(away.map((client) => client.offline()));
      const endedBefore = endedOracles(listening);
      for (const write of round.writes.slice(stretch * per, (stretch + 1) * per)) {
        history.apply(await commitAsAdmin(hearth, [write]), [write]);
        await commitAsAdmin(emulator, [write]);
      }
      await standInsFor(round, listening, away, endedBefore, `e${stretch}`);
      await Promise.all(away.map((client) => client.online()));
      await settle();
      await resumes(round, resumeFrom, stretch);
    }
    await settle();
    await compareWithTheEmulator(round, listening);
  } finally {
    for (const raw of listening.raw) raw.close();
    await Promise.all([...listening.hearthSdk, ...listening.emulatorSdk.values()].map((client) => client.close()));
  }
  const final = new Map<string, DocData | undefined>();
  for (const write of round.writes) final.set(write.path, history.at(write.path, Number.MAX_SAFE_INTEGER));
  await crossCheck(emulator, round, final, judged);
}

async function listen(round: Round): Promise<Listening> {
  const listening: Listening = { raw: [], hearthSdk: [], emulatorSdk: new Map(), standIns: new Map() };
  const targets = targetsOf(round);
  for (const caller of callerNames) {
    for (const kind of ['grpc', 'webchannel'] as const) {
      const raw = await RawListen.open(hearth, round, caller, kind, ledger, 'Listen', targets[0]!);
      for (const target of targets.slice(1)) await raw.add(target);
      listening.raw.push(raw);
    }
    for (const kind of ['firebase-grpc', 'firebase-webchannel'] as const) listening.hearthSdk.push(listenAll(await SdkClient.open(kind, hearth, round, caller, ledger), round));
    listening.hearthSdk.push(listenAll(new AdminSdkListeners(hearth, round, caller, ledger), round));
    listening.emulatorSdk.set(caller, listenAll(await SdkClient.open('firebase-grpc', emulator, round, caller, undefined), round));
  }
  return listening;
}

function listenAll<Client extends SdkClient | AdminSdkListeners>(client: Client, round: Round): Client {
  for (const query of round.queries) client.listen({ query });
  for (const document of round.documents) client.listen({ document });
  return client;
}

/** The emulator's listeners (and stand-ins) that have ended. */
function endedOracles(listening: Listening): Set<SdkListenerState> {
  const states = [...listening.emulatorSdk.values()].flatMap((client) => client.listeners);
  for (const standIns of listening.standIns.values()) states.push(...standIns.values());
  return new Set(states.filter((state) => state.error !== undefined));
}

/**
 * Before the clients that were away come back: the emulator's listeners have heard of the stretch's writes (`mark`),
 * and each one that ended during the stretch gets, for each away client of its caller, a stand-in opened now.
 */
async function standInsFor(round: Round, listening: Listening, away: SdkClient[], endedBefore: Set<SdkListenerState>, mark: string): Promise<void> {
  await writeMark(emulator, round, mark);
  await Promise.all([...listening.emulatorSdk.values()].map((client) => client.settled(mark)));
  const opened: SdkListenerState[] = [];
  for (const client of away) {
    const oracle = listening.emulatorSdk.get(client.caller)!;
    const standIns = listening.standIns.get(client) ?? new Map<number, SdkListenerState>();
    listening.standIns.set(client, standIns);
    oracle.listeners.forEach((state, i) => {
      const current = standIns.get(i) ?? state;
      if (current.error === undefined || endedBefore.has(current)) return;
      const target = i < round.queries.length ? { query: round.queries[i]! } : { document: round.documents[i - round.queries.length]! };
      standIns.set(i, oracle.listen(target));
      // Not one of the oracle's own listeners: `settled` and the comparison go by index.
      opened.push(oracle.listeners.pop()!);
    });
  }
  const deadline = Date.now() + 20_000;
  while (opened.some((state) => !state.synced && state.error === undefined) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** Every stream and SDK client has seen `mark` (so everything written before it); a laggard is a breach. */
async function caughtUp(round: Round, listening: Listening, mark: string): Promise<void> {
  const laggards: string[] = [];
  await Promise.all([
    ...listening.raw.map(async (raw) => (await raw.settled(mark)) || laggards.push(`raw ${raw.kind} Listen of ${raw.caller}${raw.ended ? ` (ended: ${raw.ended})` : ''}`)),
    ...listening.hearthSdk.map(async (client) => (await client.settled(mark)) || laggards.push(`${client.kind} SDK of ${client.caller} on Hearth (${client.pending(mark)})`)),
    ...[...listening.emulatorSdk.values()].map(async (client) => (await client.settled(mark)) || laggards.push(`${client.kind} SDK of ${client.caller} on the emulator (${client.pending(mark)})`)),
  ]);
  for (const laggard of laggards) {
    ledger.breach({ kind: 'a listener did not catch up with the writes', round, caller: 'anonymous', transport: 'listen', path: 'caught up', detail: `${laggard} did not catch up with ${mark}` });
  }
}

/**
 * Resumes as an attacker would: a new stream of each caller adds every target of the round with the resume
 * token, or the read time, its first stream was given at the round's start (over gRPC and WebChannel in turn).
 */
async function resumes(round: Round, resumeFrom: Map<CallerName, RawListen>, stretch: number): Promise<void> {
  const mark = `resumed${stretch}`;
  const streams: RawListen[] = [];
  for (const [i, caller] of callerNames.entries()) {
    const earlier = resumeFrom.get(caller)!;
    const specs: TargetSpec[] = [];
    for (const target of targetsOf(round)) {
      const current = earlier.targets.get(target.targetId)?.current;
      if (!current) continue;
      specs.push({ ...target, resumeToken: current.resumeToken });
      specs.push({ ...target, targetId: target.targetId + 500, readTime: current.readTime });
    }
    if (specs.length === 0) continue;
    const kind = (i + stretch) % 2 === 0 ? 'grpc' : 'webchannel';
    const stream = await RawListen.open(hearth, round, caller, kind, ledger, 'Listen', specs[0]!);
    for (const spec of specs.slice(1)) await stream.add(spec);
    streams.push(stream);
  }
  await writeMark(hearth, round, mark);
  await Promise.all(streams.map((stream) => stream.settled(mark)));
  for (const stream of streams) stream.close();
}

/** Each SDK listener on Hearth (both transports) against the same listener on the emulator. */
async function compareWithTheEmulator(round: Round, listening: Listening): Promise<void> {
  const differences = () => {
    const found: Array<{ caller: CallerName; kind: string; label: string; hearth: string; emulator: string }> = [];
    for (const client of listening.hearthSdk) {
      const oracle = listening.emulatorSdk.get(client.caller)!;
      client.listeners.forEach((state, i) => {
        const standIn = client instanceof SdkClient ? listening.standIns.get(client)?.get(i) : undefined;
        const expected = describeState(standIn ?? oracle.listeners[i]!);
        const actual = describeState(state);
        if (actual !== expected) found.push({ caller: client.caller, kind: client.kind, label: state.label, hearth: actual, emulator: expected });
      });
    }
    return found;
  };
  // Limbo resolutions may still be on their way: a difference must last to count.
  let found = differences();
  for (let i = 0; found.length && i < 12; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    found = differences();
  }
  for (const difference of found) {
    ledger.breach({
      kind: 'a listener ended unlike the emulator’s',
      round,
      caller: difference.caller,
      transport: `sdk:${difference.kind}`,
      path: 'onSnapshot final state',
      detail: `${difference.kind} onSnapshot ${difference.label} as ${difference.caller}\n    Hearth: ${difference.hearth}\n    emulator: ${difference.emulator}`,
    });
  }
}
