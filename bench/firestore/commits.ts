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
import { checkCommit, commitBody, fieldsFor, layoutFor } from './data.js';
import { settings, type CommitShape } from './settings.js';
import { post, type Target } from './targets.js';

/** A commit workload of fresh documents (inserts) shaped like the query collection's. */
function commitOp(target: Target, batch: number): () => Promise<unknown> {
  const layout = layoutFor(1_000_000, 'unused');
  let next = 0;
  const run = `r${Math.random().toString(36).slice(2, 8)}b${batch}`;
  return async () => {
    const docs = Array.from({ length: batch }, () => {
      const i = next++;
      return { id: `${run}-${i}`, fields: fieldsFor(layout, i) };
    });
    checkCommit(target, await post(target, ':commit', commitBody(target, 'commits', docs)), batch);
  };
}

export async function measureCommits(target: Target, shape: CommitShape): Promise<Rate> {
  return measureConcurrent(shape.clients, settings.warmupSeconds, settings.seconds, commitOp(target, shape.batch));
}

/** A commit workload run in this process, one writer, beside the HTTP one. */
export interface InProcessCommits {
  op: (batch: number) => () => Promise<unknown>;
  close(): Promise<void> | void;
}

export interface InProcessBaselines {
  raw: InProcessCommits;
  core: InProcessCommits;
}

export async function inProcessBaselines(): Promise<InProcessBaselines> {
  return { raw: rawSqliteBaseline(), core: hearthCoreCommits() };
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
    op: (batch) => async () => {
      const writes = Array.from({ length: batch }, (_, k) => {
        const i = next++;
        const update = { name: `projects/${db.projectId}/databases/(default)/documents/commits/core-${i}`, fields: fieldsFor(layout, i) };
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

/** Raw better-sqlite3: the same document name and fields JSON per row, one transaction per batch. */
function rawSqliteBaseline(): InProcessCommits {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-raw-'));
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE docs (name TEXT PRIMARY KEY, fields TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT INTO docs (name, fields) VALUES (?, ?)');
  const write = db.transaction((rows: [string, string][]) => {
    for (const row of rows) insert.run(...row);
  });
  const layout = layoutFor(1_000_000, 'unused');
  const prefix = 'projects/demo-hearth/databases/(default)/documents/commits/';
  let next = 0;
  return {
    op: (batch) => async () => {
      const rows = Array.from({ length: batch }, (): [string, string] => {
        const i = next++;
        return [`${prefix}raw-${i}`, JSON.stringify(fieldsFor(layout, i))];
      });
      write.immediate(rows);
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
