/**
 * The moves of tests/firestore/export-*.test.ts: Google's Firestore emulator (the oracle) holding
 * seeded random documents, its own export of them, `hearth import firestore` / `hearth export
 * firestore` run as a user runs them (their own processes, on a data folder or the test backend's
 * PostgreSQL database), and the same random queries asked of two servers.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { GoogleEmulator } from './firestore-emulator.js';
import { repoRoot, tempDataDir } from './hearth.js';
import { call, canonicalRunQuery, compareAnswers, type Mismatch, type Server } from './firestore-differential-compare.js';
import { Random, layoutForSeed, randomDataset, randomValidQuery, type Dataset } from './random-firestore.js';
import { testDatabaseUrl } from './test-backend.js';
import { hearthCommand } from './hearth-command.js';

export { call };

export const exportProject = 'demo-export';
export const exportDatabaseRoot = `projects/${exportProject}/databases/(default)/documents`;


/** Seed 2 queries a root collection, seed 3 one under a document (both parents, collection groups from the root). */
export const exportSeeds = [2, 3];

/** Writes every seed's documents to the emulator; returns them by seed. */
export async function seedEmulator(emulator: GoogleEmulator): Promise<Map<number, Dataset>> {
  const datasets = new Map<number, Dataset>();
  for (const seed of exportSeeds) {
    const dataset = randomDataset(new Random(seed * 7_919 + 1), layoutForSeed(exportDatabaseRoot, seed), 120);
    const writes = dataset.documents.map(({ name, fields }) => ({ update: { name, fields } }));
    const written = await call({ label: 'emulator', url: emulator.url }, 'POST', `${exportDatabaseRoot}:commit`, { writes });
    assert.equal(written.status, 200, `the emulator refused seed ${seed}'s documents: ${JSON.stringify(written.body).slice(0, 500)}`);
    datasets.set(seed, dataset);
  }
  return datasets;
}

/** The emulator's own export of a database (the REST call `firebase emulators:export` makes) into a new folder. */
export async function emulatorExport(emulator: GoogleEmulator, projectId: string, databaseId = '(default)'): Promise<string> {
  const parent = tempDataDir();
  const response = await fetch(`${emulator.url}/emulator/v1/projects/${projectId}:export`, {
    method: 'POST',
    body: JSON.stringify({ database: `projects/${projectId}/databases/${databaseId}`, export_directory: parent, export_name: 'firestore_export' }),
  });
  assert.equal(response.status, 200, `the emulator's export failed: ${await response.text()}`);
  return join(parent, 'firestore_export');
}

/** `hearth ARGS --data DIR` (plus the test backend's --database-url), as its own process. */
export async function hearthCli(args: string[], dataDir: string): Promise<{ code: number; stderr: string }> {
  mkdirSync(dataDir, { recursive: true });
  const databaseUrl = await testDatabaseUrl(dataDir);
  const all = [...args, '--data', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])];
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [...hearthCommand(), ...all], { cwd: repoRoot });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

/** `perSeed` random valid queries per seed, asked of both; the answers (documents in order) must be the same. */
export async function compareRandomQueries(oracle: Server, subject: Server, datasets: Map<number, Dataset>, perSeed: number): Promise<{ mismatches: Mismatch[]; answered: number }> {
  const mismatches: Mismatch[] = [];
  let answered = 0;
  const context = { databaseRoot: exportDatabaseRoot };
  for (const [seed, dataset] of datasets) {
    const rng = new Random(seed * 104_729 + 7);
    const queries = Array.from({ length: perSeed }, () => randomValidQuery(rng, dataset));
    let next = 0;
    const worker = async () => {
      while (next < queries.length) {
        const index = next++;
        const structuredQuery = queries[index]!;
        const path = `${dataset.parent}:runQuery`;
        const [fromOracle, fromSubject] = await Promise.all([call(oracle, 'POST', path, { structuredQuery }), call(subject, 'POST', path, { structuredQuery })]);
        if (fromOracle.status === 200) answered++;
        const mismatch = compareAnswers({ seed, what: `query #${index}`, request: structuredQuery }, fromOracle, fromSubject, (answer) => canonicalRunQuery(answer, context));
        if (mismatch) mismatches.push(mismatch);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  }
  return { mismatches, answered };
}
