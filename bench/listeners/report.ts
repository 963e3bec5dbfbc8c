/** The listener bench's header and tables. */
import { loadavg } from 'node:os';
import { machineLine } from '../env.js';
import { mib, ms, renderTable, type Spread } from '../stats.js';
import type { LatencyResult, LatencyRow } from './latency.js';
import type { MemoryResult, MemorySample } from './memory.js';
import { settings, shapes } from './settings.js';

export interface TargetRun {
  name: string;
  latency: LatencyResult;
  memory: MemoryResult;
  /** Why something was not measured. */
  note?: string;
}

export function header(): string {
  return [
    'Hearth listener benchmark: time from a commit to each listener\'s snapshot, and how many listening clients one process holds',
    machineLine(),
    `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
    `clients: raw gRPC over HTTP/2 in ${settings.processes} processes of their own (a client is one connection, a listener one Listen stream`,
    '  on `messages where room == R`, decoded only as far as the commit number the writer stamped in the document); a writer process sends',
    '  REST :commit of one matching document (20 in turn: added, then changed, so results stay 20 long) and waits until every listener has',
    '  it before the next. Latency: from the commit\'s acknowledgement at the writer to the listener\'s receipt (one clock for all processes:',
    '  performance.timeOrigin + now()); "from send" from just before the commit was sent.',
    `latency: ${shapes.map((s) => `${s.listeners} listener${s.listeners > 1 ? 's' : ''} on ${s.clients} client${s.clients > 1 ? 's' : ''}`).join(', ')}; ${settings.warmup} warm-up + ${settings.commits} measured commits each`,
    `memory: ${settings.clientSteps.join(', ')} clients with one listener each (${settings.stepCommits} commits per step), then ${settings.rounds} rounds of ${settings.roundCommits} commits at the largest`,
    `NOTE: ${settings.processes + 2} processes share the cores: the server, the listeners\' processes and the writer (see CPU per commit).`,
  ].join('\n');
}

const pair = (spread: Spread | undefined) => (spread ? `${ms(spread.median)} / ${ms(spread.p99)}` : '—');
const ratio = (x: number | undefined, y: number | undefined) => (x !== undefined && y !== undefined && y > 0 ? (x / y).toFixed(2) : '—');
const cpu = (value: number | undefined) => (value === undefined ? '—' : ms(value));
const kib = (bytes: number | undefined) => (bytes === undefined || !Number.isFinite(bytes) ? '—' : `${(bytes / 1024).toFixed(1)} KiB`);
const mib1 = (bytes: number | undefined) => (bytes === undefined || !Number.isFinite(bytes) ? '—' : `${(bytes / 2 ** 20).toFixed(1)} MiB`);

function latencyTables(hearth: TargetRun | undefined, peer: TargetRun | undefined): void {
  const row = (run: TargetRun | undefined, listeners: number): LatencyRow | undefined => run?.latency.rows.find((r) => r.listeners === listeners);
  console.log('');
  console.log('Commit to snapshot: median / p99 ms over every listener and commit (from the commit\'s acknowledgement, and from its sending), and of the first and the last listener per commit (from ack)');
  const body = shapes.map((shape) => {
    const h = row(hearth, shape.listeners);
    const e = row(peer, shape.listeners);
    return [
      String(shape.listeners),
      String(shape.clients),
      pair(h?.each),
      pair(h?.fromSend),
      pair(h?.first),
      pair(h?.last),
      ratio(h?.fromSend.median, hearth?.latency.baseline?.median),
      pair(e?.each),
      pair(e?.last),
      ratio(e?.fromSend.median, peer?.latency.baseline?.median),
      ratio(e?.fromSend.median, h?.fromSend.median),
    ];
  });
  console.log(renderTable(['listeners', 'clients', 'Hearth from ack', 'from send', 'first listener', 'last listener', 'Hearth÷commit', 'emulator', 'last listener', 'emulator÷commit', 'emulator÷Hearth'], body));
  console.log(`commit alone (baseline: REST :commit of one document, nobody listening, same run): Hearth ${pair(hearth?.latency.baseline)} ms; emulator ${pair(peer?.latency.baseline)} ms`);
  console.log('first listener: the server writes a commit to every listener before any leaves it (one tick), so first is roughly the server\'s share and last - first the clients\' (each process reads its listeners one after another).');
  console.log('÷commit: median listener latency from send ÷ median commit alone. emulator÷Hearth: ratio of medians, above 1 when Hearth delivers faster.');
  console.log(`Every listener received every commit exactly once (counted: listeners × ${settings.commits} snapshots per row, or the run fails).`);

  console.log('');
  console.log('What a commit costs while they listen: the writer\'s commit round trip (median / p99 ms), CPU ms per commit of the server and of the clients');
  const costs = shapes.map((shape) => {
    const h = row(hearth, shape.listeners);
    const e = row(peer, shape.listeners);
    return [String(shape.listeners), pair(h?.commit), cpu(h?.serverCpuMs), cpu(h?.clientCpuMs), pair(e?.commit), cpu(e?.serverCpuMs), cpu(e?.clientCpuMs)];
  });
  console.log(renderTable(['listeners', 'Hearth commit', 'server CPU', 'client CPU', 'emulator commit', 'server CPU', 'client CPU'], costs));
  console.log('server CPU: Hearth\'s process (this one) or the emulator\'s process group, over the measured commits ÷ commits.');
  if (hearth?.latency.profile) {
    const { file, samples, top } = hearth.latency.profile;
    console.log('');
    console.log(`Hearth CPU profile over the ${Math.max(...settings.listeners)}-listener commits (${samples} samples, idle left out; ${file}), self time by function:`);
    for (const { name, share } of top) console.log(`  ${(share * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
}

function perClient(sample: MemorySample, base: MemorySample | undefined, key: 'heap' | 'rss'): number | undefined {
  const now = sample[key];
  const then = base?.[key];
  return now === undefined || then === undefined || sample.clients === 0 ? undefined : (now - then) / sample.clients;
}

function memoryTable(run: TargetRun): void {
  const { base, steps, idle, rounds, released, stopped } = run.memory;
  if (!base) return;
  console.log('');
  console.log(`${run.name}: clients with one listener each, server memory after each step (after a full collection when in-process)`);
  const body = [base, ...steps].map((s) => {
    const step = steps.find((x) => x === s);
    return [
      String(s.clients),
      s.sockets === undefined ? '—' : String(s.sockets),
      mib1(s.heap),
      kib(perClient(s, base, 'heap')),
      mib1(s.rss),
      kib(perClient(s, base, 'rss')),
      pair(step?.each),
      pair(step?.last),
      cpu(step?.serverCpuMs),
      cpu(step?.clientCpuMs),
      step ? (step.openMs / 1000).toFixed(1) : '—',
      s.clientRss === undefined ? '—' : mib(s.clientRss),
    ];
  });
  console.log(renderTable(['clients', 'TCP conns', 'heap', 'heap/client', 'RSS', 'RSS/client', 'p50 / p99 ms', 'last listener', 'server CPU', 'client CPU', 'open s', 'client RSS'], body));
  console.log('heap/client, RSS/client: growth since no client ÷ clients. TCP conns: open sockets in the server process (each client has its own).');
  console.log(`p50 / p99, last listener: commit to snapshot over the step's ${settings.stepCommits} commits; server CPU, client CPU: ms per commit; open s: opening the step's clients.`);
  if (stopped) console.log(`stopped: ${stopped}`);
  if (idle.length > 0) {
    const first = idle[0]!;
    const last = idle[idle.length - 1]!;
    console.log(`${first.clients} clients held idle, every 10 s (s: RSS / heap):`);
    console.log(`  ${idle.map((s) => `${s.seconds}: ${mib1(s.rss)} / ${mib1(s.heap)}`).join(', ')}`);
    console.log(`  RSS first → last ${((last.rss - first.rss) / 2 ** 20).toFixed(1)} MiB over ${last.seconds} s; RSS per client ${kib(perClient(last, base, 'rss'))}, heap per client ${kib(perClient(last, base, 'heap'))}`);
  }
  if (rounds.length > 0) {
    const first = rounds[0]!;
    const last = rounds[rounds.length - 1]!;
    console.log(`${first.clients} clients held, after each round of ${settings.roundCommits} commits and 1 s idle:`);
    console.log(`  heap ${rounds.map((r) => mib1(r.heap)).join(' → ')}`);
    console.log(`  RSS  ${rounds.map((r) => mib1(r.rss)).join(' → ')}`);
    if (first.heap !== undefined && last.heap !== undefined && base.heap !== undefined) {
      const drift = last.heap - first.heap;
      const footprint = first.heap - base.heap;
      const commits = (rounds.length - 1) * settings.roundCommits;
      const flat = Math.abs(drift) <= Math.max(2 ** 20, 0.02 * footprint);
      console.log(
        `  heap first → last round ${drift >= 0 ? '+' : ''}${kib(drift)} over ${commits} commits (${(drift / Math.max(1, commits)).toFixed(0)} bytes per commit), ` +
          `beside ${mib1(footprint)} for the clients themselves: ${flat ? 'FLAT' : 'NOT FLAT'} (flat: within 2% of that, or 1 MiB)`,
      );
    }
  }
  if (released) console.log(`all clients closed: heap ${mib1(released.heap)}, RSS ${mib1(released.rss)} (before any: heap ${mib1(base.heap)}, RSS ${mib1(base.rss)})`);
}

/** The same latencies with the listeners and the writer spread over the workers of one Hearth, beside one process. */
function workersTable(run: TargetRun, hearth: TargetRun | undefined): void {
  const row = (of: TargetRun | undefined, listeners: number): LatencyRow | undefined => of?.latency.rows.find((r) => r.listeners === listeners);
  console.log('');
  console.log(`${run.name} (SQLite; the clients' connections spread over the workers): commit to snapshot, median / p99 ms`);
  const body = shapes.map((shape) => {
    const w = row(run, shape.listeners);
    const h = row(hearth, shape.listeners);
    return [String(shape.listeners), String(shape.clients), pair(w?.each), pair(w?.last), pair(h?.each), ratio(w?.each.median, h?.each.median)];
  });
  console.log(renderTable(['listeners', 'clients', 'from ack', 'last listener', 'one process, from ack', 'workers÷one'], body));
  console.log(`commit alone: ${pair(run.latency.baseline)} ms. Every listener received every commit exactly once, whichever worker it listened on.`);
}

export function report(runs: TargetRun[]): void {
  const hearth = runs.find((run) => run.name === 'Hearth');
  const peer = runs.find((run) => run.name === 'emulator');
  latencyTables(hearth, peer);
  for (const run of runs) if (run.name.startsWith('Hearth --workers')) workersTable(run, hearth);
  for (const run of runs) memoryTable(run);
  for (const run of runs) if (run.note) console.log(`\n${run.name}: ${run.note}`);
}
