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
import { measureConcurrent, type Rate } from '../stats.js';
import { rawIndexedBaseline } from './raw-indexed.js';
import { checkCommit, commitBody, fieldsFor, layoutFor } from './data.js';
import { overwritePool, settings, type CommitShape } from './settings.js';
import { post, type Target } from './targets.js';

/**
 * A commit workload shaped like the query collection's documents: fresh documents (inserts), or with
 * `overwrite` new values for a pool of documents written before (updates: the previous version is
 * replaced), each writer its own pool.
 */
function commitOp(target: Target, batch: number, overwrite: boolean): () => Promise<unknown> {
  const layout = layoutFor(1_000_000, 'unused');
  let next = 0;
  const run = `r${Math.random().toString(36).slice(2, 8)}b${batch}`;
  return async () => {
    const docs = Array.from({ length: batch }, () => {
      const i = next++;
      return { id: `${run}-${overwrite ? i % overwritePool : i}`, fields: fieldsFor(layout, i) };
    });
    checkCommit(target, await post(target, ':commit', commitBody(target, 'commits', docs)), batch);
  };
}

export async function measureCommits(target: Target, shape: CommitShape): Promise<Rate> {
  const op = commitOp(target, shape.batch, shape.overwrite === true);
  // Each writer of an overwriting shape runs its own pool, written once before the clock starts.
  const ops = Array.from({ length: shape.clients }, () => (shape.overwrite ? commitOp(target, shape.batch, true) : op));
  if (shape.overwrite) for (const each of ops) for (let i = 0; i < overwritePool / shape.batch; i++) await each();
  let client = 0;
  return measureConcurrent(shape.clients, settings.warmupSeconds, settings.seconds, ops.length === 1 ? ops[0]! : () => ops[client++ % ops.length]!());
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
