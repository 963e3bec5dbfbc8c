/**
 * Several Hearth processes on one PostgreSQL database: REST commit throughput spread over 1, 2
 * and 3 instances (same total concurrency), and commit-to-snapshot latency with the writer on
 * one instance and a firebase SDK listener on another.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectFirestoreEmulator, doc, getFirestore, onSnapshot, setLogLevel, terminate } from 'firebase/firestore';
import { freePort, spawnHearth, type SpawnedHearth } from '../../tests/helpers/hearth.js';
import { progress } from '../env.js';
import { percentile, runConcurrent, type Rate } from '../stats.js';

const projectId = 'demo-bench';

export interface Instances {
  urls: string[];
  ports: number[];
  close(): Promise<void>;
}

export async function startInstances(count: number, databaseUrl: string): Promise<Instances> {
  const started: SpawnedHearth[] = [];
  const dirs: string[] = [];
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-instance-'));
    dirs.push(dir);
    ports.push(port);
    started.push(await spawnHearth(['--port', String(port), '--data', dir, '--dev', '--project', projectId, '--log-level', 'error', '--database-url', databaseUrl]));
    progress(`instance ${i + 1} of ${count} up`);
  }
  return {
    urls: started.map((instance) => instance.url),
    ports,
    async close() {
      for (const instance of started) await instance.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function commitRequest(url: string, id: string, value: number): Promise<void> {
  const name = `projects/${projectId}/databases/(default)/documents/spread/${id}`;
  return fetch(`${url}/v1/projects/${projectId}/databases/(default)/documents:commit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
    body: JSON.stringify({ writes: [{ update: { name, fields: { n: { integerValue: String(value) } } } }] }),
  }).then(async (response) => {
    if (!response.ok) throw new Error(`commit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  });
}

/** REST commits of distinct documents, `concurrency` in flight, spread round-robin over the first `use` instances. */
export async function spreadThroughput(instances: Instances, use: number, concurrency: number, seconds: number): Promise<Rate> {
  let next = 0;
  return runConcurrent(concurrency, seconds, () => {
    const i = next++;
    return commitRequest(instances.urls[i % use]!, `d${i % 50_000}`, i);
  });
}

/** Writer on instance 0 (REST), listener on instance `listenOn`: time from sending the commit to the snapshot holding it. */
export async function commitToSnapshot(instances: Instances, listenOn: number, samples: number): Promise<{ p50: number; p99: number }> {
  setLogLevel('silent');
  const app = initializeApp({ apiKey: 'bench', projectId }, `bench-listener-${Date.now()}`);
  const db = getFirestore(app);
  connectFirestoreEmulator(db, '127.0.0.1', instances.ports[listenOn]!);
  const latencies: number[] = [];
  let waiting: { value: number; began: number; done: () => void } | undefined;
  let ready: () => void = () => undefined;
  const first = new Promise<void>((resolve) => (ready = resolve));
  const stop = onSnapshot(doc(db, 'latency/probe'), (snapshot) => {
    ready();
    const value = snapshot.get('n') as number | undefined;
    if (waiting && value === waiting.value) {
      latencies.push(performance.now() - waiting.began);
      waiting.done();
    }
  });
  await first;
  try {
    for (let i = 1; i <= samples; i++) {
      const seen = new Promise<void>((resolve) => (waiting = { value: i, began: performance.now(), done: resolve }));
      const name = `projects/${projectId}/databases/(default)/documents/latency/probe`;
      await fetch(`${instances.urls[0]}/v1/projects/${projectId}/databases/(default)/documents:commit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
        body: JSON.stringify({ writes: [{ update: { name, fields: { n: { integerValue: String(i) } } } }] }),
      });
      await seen;
    }
  } finally {
    stop();
    await terminate(db);
    await deleteApp(app);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
