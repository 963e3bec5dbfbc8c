/** 1. Commit throughput through `:commit`, and its baseline: raw better-sqlite3 inserts of the same rows. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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

export interface RawSqlite {
  op: (batch: number) => () => Promise<unknown>;
  close(): void;
}

/** Raw better-sqlite3: the same document name and fields JSON per row, one transaction per batch. */
export function rawSqliteBaseline(): RawSqlite {
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
