/**
 * `npm run bench -- import`: `hearth import firestore` of a large Firestore export (its own process,
 * into an empty SQLite data folder, or PostgreSQL with BENCH_IMPORT_DATABASE_URL) in documents per
 * second and its peak memory, beside Google's Firestore emulator importing the same export
 * (`--import-data`: its start with the export less its start without one). The export is written
 * here in Google's layout: BENCH_IMPORT_DOCS documents (default 1,000,000) of five fields each (an
 * int, a string, a timestamp, a two-element array, a map of two), nine index entries per document.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ExportWriter } from '../packages/server/src/firestore/exports/export-layout.js';
import { documentToEntity } from '../packages/server/src/firestore/exports/entity-values.js';
import type { Value } from '../packages/server/src/firestore/core/values.js';
import { startGoogleEmulator } from '../tests/helpers/firestore-emulator.js';
import { repoRoot, tempDataDir } from '../tests/helpers/hearth.js';
import { envCount, machineLine, progress } from './env.js';
import { renderTable } from './stats.js';

const projectId = 'demo-import-bench';

function writeExport(count: number): { folder: string; bytes: number } {
  const folder = join(tempDataDir(), 'firestore_export');
  const writer = new ExportWriter(folder);
  for (let i = 0; i < count; i++) {
    const fields = new Map<string, Value>([
      ['n', { type: 'integer', value: BigInt(i) }],
      ['name', { type: 'string', value: `item ${i % 1000}` }],
      ['at', { type: 'timestamp', seconds: 1_700_000_000 + i, nanos: (i % 1000) * 1000 }],
      ['tags', { type: 'array', values: [{ type: 'string', value: `t${i % 7}` }, { type: 'string', value: `u${i % 13}` }] }],
      ['m', { type: 'map', fields: new Map<string, Value>([['x', { type: 'double', value: i / 3 }], ['y', { type: 'boolean', value: i % 2 === 0 }]]) }],
    ]);
    writer.add(documentToEntity(projectId, '(default)', `items/i${i}`, fields));
  }
  return { folder, bytes: writer.close().bytes };
}

/** The CLI under /usr/bin/time: wall seconds and peak RSS (KiB). */
async function hearthImport(folder: string): Promise<{ seconds: number; peakKiB: number; summary: string }> {
  const dataDir = tempDataDir();
  const databaseUrl = process.env.BENCH_IMPORT_DATABASE_URL;
  const started = performance.now();
  const { stderr } = await promisify(execFile)(
    '/usr/bin/time',
    ['-f', 'peak-rss-kib %M', process.execPath, '--import', 'tsx', join(repoRoot, 'packages/server/src/main.ts'), 'import', 'firestore', folder, '--data', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])],
    { cwd: repoRoot, maxBuffer: 1 << 24 },
  );
  const seconds = (performance.now() - started) / 1000;
  rmSync(dataDir, { recursive: true, force: true });
  return { seconds, peakKiB: Number(/peak-rss-kib (\d+)/.exec(stderr)?.[1] ?? 0), summary: /Imported .*/.exec(stderr)?.[0] ?? stderr.trim() };
}

async function countInEmulator(url: string): Promise<number> {
  const response = await fetch(`${url}/v1/projects/${projectId}/databases/(default)/documents:runAggregationQuery`, {
    method: 'POST',
    headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
    body: JSON.stringify({ structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'items' }] }, aggregations: [{ alias: 'n', count: {} }] } }),
  });
  const body = (await response.json()) as Array<{ result?: { aggregateFields?: { n?: { integerValue?: string } } } }>;
  return Number(body[0]?.result?.aggregateFields?.n?.integerValue ?? -1);
}

/** Seconds the emulator takes to start with the export, less its start without one. */
async function emulatorImport(folder: string, count: number): Promise<{ seconds: number; counted: number } | undefined> {
  const timedStart = async (args: string[]) => {
    const started = performance.now();
    const emulator = await startGoogleEmulator({ args, startupTimeoutMs: 1_200_000, jit: 'full' });
    return emulator && { emulator, seconds: (performance.now() - started) / 1000 };
  };
  const empty = await timedStart([]);
  if (!empty) return undefined;
  await empty.emulator.stop();
  const loaded = await timedStart([`--import-data=${join(folder, 'firestore_export.overall_export_metadata')}`]);
  if (!loaded) return undefined;
  const counted = count <= 200_000 ? await countInEmulator(loaded.emulator.url) : -1;
  await loaded.emulator.stop();
  return { seconds: Math.max(loaded.seconds - empty.seconds, 0.001), counted };
}

export async function runImportBench(): Promise<void> {
  const count = envCount('BENCH_IMPORT_DOCS', 1_000_000);
  console.log(`import: ${count} documents, ${machineLine()}`);
  progress(`writing an export of ${count} documents`);
  const { folder, bytes } = writeExport(count);
  progress(`hearth import firestore (${(bytes / 2 ** 20).toFixed(0)} MiB)`);
  const hearth = await hearthImport(folder);
  progress(hearth.summary);
  progress("the emulator's --import-data");
  const emulator = await emulatorImport(folder, count);
  rmSync(join(folder, '..'), { recursive: true, force: true });
  const rows = [
    ['hearth import firestore', `${Math.round(count / hearth.seconds)}`, hearth.seconds.toFixed(1), `${(hearth.peakKiB / 1024).toFixed(0)} MiB`],
    ...(emulator ? [["emulator --import-data", `${Math.round(count / emulator.seconds)}`, emulator.seconds.toFixed(1), emulator.counted >= 0 ? `counted ${emulator.counted}` : '']] : []),
  ];
  console.log(renderTable(['import', 'documents/s', 'seconds', 'peak RSS / check'], rows));
  if (emulator) console.log(`Hearth / emulator: ${(emulator.seconds / hearth.seconds).toFixed(2)}x (export ${(bytes / 2 ** 20).toFixed(0)} MiB; Hearth's time includes the CLI's start and the commit)`);
  else console.log('the Firestore emulator is not installed: no comparison');
}
