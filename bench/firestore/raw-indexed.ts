/**
 * A second raw baseline for commits: better-sqlite3 writing what automatic indexing obliges any
 * Firestore to write, and nothing more. Firestore indexes every field of every document (one
 * single-field entry per field, served in both directions), so a document of five fields is the
 * document row plus five index rows. The plain "raw SQLite" baseline writes the document row
 * alone; this one adds one WITHOUT ROWID index row per field, keyed like Hearth's (collection,
 * field, encoded value, document id), with the value encoded as cheaply as possible (JSON text).
 * Hearth÷this says how far Hearth is from the physical floor of the work Firestore's semantics
 * demand, where Hearth÷raw mixes that floor with Hearth's own overhead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { InProcessCommits } from './commits.js';
import { fieldsFor, layoutFor } from './data.js';
import { overwritePool } from './settings.js';

export function rawIndexedBaseline(): InProcessCommits {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-raw-indexed-'));
  const db = new Database(join(dir, 'raw-indexed.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    CREATE TABLE docs (parent TEXT NOT NULL, id TEXT NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (parent, id)) WITHOUT ROWID;
    CREATE TABLE entries (parent TEXT NOT NULL, field TEXT NOT NULL, value BLOB NOT NULL, id TEXT NOT NULL,
      PRIMARY KEY (parent, field, value, id)) WITHOUT ROWID;
  `);
  const previous = db.prepare<[string, string], { fields: string }>('SELECT fields FROM docs WHERE parent = ? AND id = ?');
  const upsert = db.prepare<[string, string, string]>('INSERT OR REPLACE INTO docs (parent, id, fields) VALUES (?, ?, ?)');
  const dropEntry = db.prepare<[string, string, Buffer, string]>('DELETE FROM entries WHERE parent = ? AND field = ? AND value = ? AND id = ?');
  const addEntry = db.prepare<[string, string, Buffer, string]>('INSERT OR IGNORE INTO entries (parent, field, value, id) VALUES (?, ?, ?, ?)');
  const parent = 'projects/demo-hearth/databases/(default)/documents/commits';
  const entriesOf = (fields: Record<string, unknown>) => Object.entries(fields).map(([field, value]) => [field, Buffer.from(JSON.stringify(value))] as const);
  const write = db.transaction((rows: { id: string; fields: Record<string, unknown> }[]) => {
    for (const row of rows) {
      // An overwrite replaces the old entries, as any index must: read the old version, drop them.
      const old = previous.get(parent, row.id);
      if (old) for (const [field, value] of entriesOf(JSON.parse(old.fields) as Record<string, unknown>)) dropEntry.run(parent, field, value, row.id);
      upsert.run(parent, row.id, JSON.stringify(row.fields));
      for (const [field, value] of entriesOf(row.fields)) addEntry.run(parent, field, value, row.id);
    }
  });
  const layout = layoutFor(1_000_000, 'unused');
  let next = 0;
  return {
    op: (batch, overwrite) => async () => {
      const rows = Array.from({ length: batch }, () => {
        const i = next++;
        return { id: `raw-${overwrite ? `u${i % overwritePool}` : i}`, fields: fieldsFor(layout, i) as Record<string, unknown> };
      });
      write.immediate(rows);
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
