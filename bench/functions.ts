/**
 * `npm run bench -- functions`: Firestore trigger delivery. Hearth (in this process, --dev, SQLite)
 * runs bench/functions-fixture (a v2 onDocumentCreated that does nothing); BENCH_FUNCTION_EVENTS
 * (400) documents are created over REST, BENCH_CONNECTIONS (10) at a time. Reported: commit-to-trigger
 * latency (the commit's time to the delivery settled: stored, claimed, encoded, sent to the worker,
 * run, removed) p50 / p99, and deliveries per second, beside plain HTTP round trips to the same
 * worker (its /__hearth/ping through the same client) at the dispatcher's concurrency.
 */
import { join } from 'node:path';
import { startHearth } from '../tests/helpers/hearth.js';
import { envCount, machineLine, progress } from './env.js';
import { renderTable } from './stats.js';

const fixture = join(import.meta.dirname, 'functions-fixture');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

export async function runFunctionsBench(): Promise<void> {
  const events = envCount('BENCH_FUNCTION_EVENTS', 400);
  const connections = envCount('BENCH_CONNECTIONS', 10);
  const server = await startHearth({ functionsDir: fixture });
  try {
    const { dispatcher, worker } = server.hearth.functions;
    const settled: number[] = [];
    const latencies: number[] = [];
    dispatcher!.onSettled((record) => {
      if (!record.ok) return;
      settled.push(record.at);
      latencies.push(record.at - record.commitTime / 1000);
    });
    const base = `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/benchItems`;
    const create = (i: number) =>
      fetch(`${base}/warm${i}`, { method: 'PATCH', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify({ fields: { n: { integerValue: String(i) } } }) });
    progress('warming up');
    for (let i = 0; i < 20; i++) await create(i);
    while (settled.length < 20) await new Promise((wake) => setTimeout(wake, 20));
    settled.length = 0;
    latencies.length = 0;
    progress(`creating ${events} documents, ${connections} at a time`);
    const started = performance.now();
    const startedAt = Date.now();
    let next = 0;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (next < events) {
        const i = next++;
        await fetch(`${base}/item${i}`, { method: 'PATCH', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify({ fields: { n: { integerValue: String(i) } } }) });
      }
    }));
    const written = performance.now();
    while (settled.length < events) await new Promise((wake) => setTimeout(wake, 5));
    const paced = events / ((Math.max(...settled) - startedAt) / 1000);
    const sorted = [...latencies].sort((a, b) => a - b);
    // Throughput without the writes' own pace: one commit creates a backlog of `batch` events at once.
    const batch = Math.min(events, 500);
    progress(`one commit creating ${batch} documents: delivering the backlog`);
    settled.length = 0;
    const writes = Array.from({ length: batch }, (_, i) => ({
      update: { name: `projects/${server.projectId}/databases/(default)/documents/benchItems/batch${i}`, fields: { n: { integerValue: String(i) } } },
    }));
    const committedAt = Date.now();
    const commit = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents:commit`, { method: 'POST', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify({ writes }) });
    if (!commit.ok) throw new Error(`the batch commit failed: ${commit.status} ${await commit.text()}`);
    while (settled.length < batch) await new Promise((wake) => setTimeout(wake, 5));
    const backlog = batch / ((Math.max(...settled) - committedAt) / 1000);
    progress('plain HTTP round trips to the worker');
    const pingStarted = performance.now();
    let sent = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent < events) {
        sent++;
        await worker!.request('/__hearth/ping', { method: 'GET', timeoutMs: 30_000 });
      }
    }));
    const pingSeconds = (performance.now() - pingStarted) / 1000;
    console.log(`\nFunctions: Firestore trigger delivery (${events} creates over REST, ${connections} at a time; SQLite)`);
    console.log(machineLine());
    console.log(renderTable(['measure', 'value'], [
      ['commit-to-trigger p50', `${percentile(sorted, 0.5).toFixed(1)} ms`],
      ['commit-to-trigger p99', `${percentile(sorted, 0.99).toFixed(1)} ms`],
      ['writes/s (REST, acknowledged)', (events / ((written - started) / 1000)).toFixed(0)],
      ['deliveries/s paced by those writes', paced.toFixed(0)],
      [`deliveries/s of a ${batch}-event backlog (one commit)`, backlog.toFixed(0)],
      ['plain HTTP round trips/s to the worker (16 at a time)', (events / pingSeconds).toFixed(0)],
      ['backlog deliveries / round trips', (backlog / (events / pingSeconds)).toFixed(2)],
    ]));
  } finally {
    await server.close();
  }
}
