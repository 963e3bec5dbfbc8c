/**
 * 1. Commit throughput through `:commit`, and its in-process references: raw better-sqlite3 inserts of the
 * same rows (the baseline), and Hearth's own database commit without HTTP (where the time goes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { parseWrite } from '../../packages/server/src/firestore/core/writes.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { measureLoad } from '../load.js';
import { type Rate } from '../stats.js';
import { rawIndexedBaseline } from './raw-indexed.js';
import { checkCommit, commitBody, fieldsFor, layoutFor } from './data.js';
import { overwritePool, settings, type CommitShape } from './settings.js';
import { documentsPath, headers, post, type Endpoint } from './targets.js';

/**
 * A commit workload shaped like the query collection's documents, as request bodies for the load
 * client: fresh documents (inserts, each body used once), or with `overwrite` new values for a pool
 * of documents written before the clock starts (updates: the previous version is replaced).
 */
function commitBodies(target: Endpoint, batch: number, overwrite: boolean, clients: number): { bodies: (count: number) => string[]; pool: string[] } {
  const layout = layoutFor(1_000_000, 'unused');
  const run = `r${Math.random().toString(36).slice(2, 8)}b${batch}`;
  // Overwrites cycle through overwritePool documents per client; every write carries new values.
  const poolSize = overwritePool * clients;
  const id = (i: number) => (overwrite ? `${run}-u${i % poolSize}` : `${run}-${i}`);
  let next = 0;
  const body = () => {
    const docs = Array.from({ length: batch }, () => {
      const i = next++;
      return { id: id(i), fields: fieldsFor(layout, i) };
    });
    return commitBody(target, 'commits', docs);
  };
  const bodies = (count: number) => Array.from({ length: count }, body);
  return { bodies, pool: overwrite ? bodies(Math.ceil(poolSize / batch)) : [] };
}

/**
 * Commits from the load client in its own process (bench/load.ts), as the identity bench drives
 * its routes: the bench process then serves alone, so the HTTP client's work is no longer charged
 * to Hearth (an in-process fetch round trip to a bare Fastify route took 0.57 ms, four times a raw
 * SQLite commit). Hearth and the emulator are driven the very same way.
 */
export async function measureCommits(target: Endpoint, shape: CommitShape): Promise<Rate> {
  const { bodies, pool } = commitBodies(target, shape.batch, shape.overwrite === true, shape.clients);
  // One commit checked whole first: the load client only sees statuses.
  checkCommit(target, await post(target, ':commit', pool[0] ?? bodies(1)[0]!), shape.batch);
  for (const each of pool.slice(1)) await post(target, ':commit', each);
  return measureLoad(
    {
      title: `${target.name} commits of ${shape.batch}`,
      url: target.origin,
      method: 'POST',
      path: `${documentsPath(target)}:commit`,
      headers,
      bodies,
      // About the warm-up's seconds at a few thousand writes a second.
      warmupRequests: Math.max(shape.clients * 20, Math.round((settings.warmupSeconds * 3000) / shape.batch)),
    },
    { connections: shape.clients, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds },
  );
}

/** A commit workload run in this process, one writer, beside the HTTP one. */
export interface InProcessCommits {
  op: (batch: number, overwrite: boolean) => () => Promise<unknown>;
  close(): Promise<void> | void;
}

export interface InProcessBaselines {
  raw: InProcessCommits;
  core: InProcessCommits;
  rawIndexed: InProcessCommits;
}

export async function inProcessBaselines(): Promise<InProcessBaselines> {
  return { raw: rawSqliteBaseline(), core: hearthCoreCommits(), rawIndexed: rawIndexedBaseline() };
}

/**
 * Hearth's DocumentDatabase on its SQLite store, as the server runs it, called directly: the same
 * documents, index entries, fsync and commit bookkeeping as `:commit`, without HTTP and JSON.
 */
function hearthCoreCommits(): InProcessCommits {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-core-'));
  const sqlite = new SqliteStore(join(dir, 'hearth.sqlite'));
  const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  const db = { projectId: 'demo-hearth', databaseId: '(default)' };
  const layout = layoutFor(1_000_000, 'unused');
  let next = 0;
  return {
    op: (batch, overwrite) => async () => {
      const writes = Array.from({ length: batch }, (_, k) => {
        const i = next++;
        const update = { name: `projects/${db.projectId}/databases/(default)/documents/commits/core-${overwrite ? `u${i % overwritePool}` : i}`, fields: fieldsFor(layout, i) };
        return parseWrite(db, { update }, `writes[${k}]`);
      });
      await database.commit(db, writes);
    },
    async close() {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Raw better-sqlite3: the same document name and fields JSON per row (replaced when overwriting), one transaction per batch. */
function rawSqliteBaseline(): InProcessCommits {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-raw-'));
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE docs (name TEXT PRIMARY KEY, fields TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT OR REPLACE INTO docs (name, fields) VALUES (?, ?)');
  const write = db.transaction((rows: [string, string][]) => {
    for (const row of rows) insert.run(...row);
  });
  const layout = layoutFor(1_000_000, 'unused');
  const prefix = 'projects/demo-hearth/databases/(default)/documents/commits/';
  let next = 0;
  return {
    op: (batch, overwrite) => async () => {
      const rows = Array.from({ length: batch }, (): [string, string] => {
        const i = next++;
        return [`${prefix}raw-${overwrite ? `u${i % overwritePool}` : i}`, JSON.stringify(fieldsFor(layout, i))];
      });
      write.immediate(rows);
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
