import Database from 'better-sqlite3';
import type { FeedEvent, StoredChange } from '../change-feed.js';
import { changeLogText } from '../change-log.js';
import type { ChangeLogRow, ChangeLogSource } from '../log-change-feed.js';
import { withWriteLock } from './sqlite-write-lock.js';

/**
 * The change log of a SQLite file that several processes write (--workers): each commit's changes
 * go to fs_changes in the commit group's own transaction, under the next sequence of their
 * database (fs_log_seq). The group holds SQLite's write lock from its first read to its COMMIT,
 * so sequences have no gaps and become visible in order, as log-change-feed.ts needs.
 */

export interface LoggedCommit {
  db: string;
  seq: number;
  event: FeedEvent;
}

export class SqliteChangeLog implements ChangeLogSource {
  private readonly statements;
  /** The group being decided: its accepted commits, what is logged, each database's sequence so far. */
  private readonly accepted: Array<{ db: string; commitTime: number; changes: StoredChange[] }> = [];
  private readonly logged: LoggedCommit[] = [];
  private readonly sequence = new Map<string, number>();
  /** A connection of its own for settledCommitTime: taking the lock there leaves the main connection free. */
  private probe: Probe | undefined;

  constructor(
    db: Database.Database,
    private readonly file: string,
  ) {
    this.statements = {
      seqOf: db.prepare<[string], { seq: number }>('SELECT seq FROM fs_log_seq WHERE db = ?'),
      setSeq: db.prepare('INSERT INTO fs_log_seq (db, seq) VALUES (?, ?) ON CONFLICT (db) DO UPDATE SET seq = excluded.seq'),
      insert: db.prepare('INSERT INTO fs_changes (db, seq, commit_time, changes) VALUES (?, ?, ?, ?)'),
      sequences: db.prepare<[], { db: string; seq: number }>('SELECT db, seq FROM fs_log_seq'),
      readAfter: db.prepare<[string, number, number], { seq: number; commit_time: number; changes: string | null }>(
        'SELECT seq, commit_time, changes FROM fs_changes WHERE db = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
    };
  }

  /** A commit the group being decided accepted (last, once nothing of it can fail any more). */
  commit(db: string, commitTime: number, changes: StoredChange[]): void {
    if (changes.length > 0) this.accepted.push({ db, commitTime, changes });
  }

  /** Inside the group's transaction, once every commit is decided: their log rows, in order. */
  writeAccepted(): void {
    for (const { db, commitTime, changes } of this.accepted.splice(0)) this.log(db, commitTime, changes, { kind: 'commit', db, commitTime, changes });
  }

  /** Inside a clear's or a load's transaction: listeners of `db` must start over. */
  reset(db: string, commitTime: number): void {
    this.log(db, commitTime, undefined, { kind: 'reset', db });
  }

  /** After the transaction: what it logged, in order (nothing if it was rolled back). */
  take(written: boolean): LoggedCommit[] {
    const logged = this.logged.splice(0);
    this.accepted.length = 0;
    this.sequence.clear();
    return written ? logged : [];
  }

  /**
   * The last commit time of `db` once no other process is writing: a commit is given its time
   * under the write lock and is visible at its COMMIT, so taking the lock (and letting go at once)
   * waits out one given a time before this call, without blocking the event loop.
   */
  async settledCommitTime(db: string): Promise<number> {
    const probe = (this.probe ??= openProbe(this.file));
    return withWriteLock(probe.db, () => probe.lastCommitTime.get(db)?.last_commit_time ?? 0);
  }

  close(): void {
    if (this.probe?.db.open) this.probe.db.close();
  }

  async sequences(): Promise<Array<{ db: string; seq: number }>> {
    return this.statements.sequences.all();
  }

  async sequenceOf(db: string): Promise<number> {
    return this.statements.seqOf.get(db)?.seq ?? 0;
  }

  async readAfter(db: string, seq: number, limit: number): Promise<ChangeLogRow[]> {
    return this.statements.readAfter.all(db, seq, limit).map((row) => ({ seq: row.seq, commitTime: row.commit_time, changes: row.changes }));
  }

  private log(db: string, commitTime: number, changes: StoredChange[] | undefined, event: FeedEvent): void {
    const seq = (this.sequence.get(db) ?? this.statements.seqOf.get(db)?.seq ?? 0) + 1;
    this.statements.insert.run(db, seq, commitTime, changes ? changeLogText(changes) : null);
    this.statements.setSeq.run(db, seq);
    this.sequence.set(db, seq);
    this.logged.push({ db, seq, event });
  }
}

interface Probe {
  db: Database.Database;
  lastCommitTime: Database.Statement<[string], { last_commit_time: number }>;
}

function openProbe(file: string): Probe {
  const db = new Database(file);
  return { db, lastCommitTime: db.prepare<[string], { last_commit_time: number }>('SELECT last_commit_time FROM fs_meta WHERE db = ?') };
}
