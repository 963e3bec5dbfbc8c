import { createHash } from 'node:crypto';
import pg from 'pg';
import type { DocumentChange, DocumentRow } from '../document-store.js';
import type { StoredChange } from '../change-feed.js';
import type { PgClient, PgPool } from './pg-connection.js';
import type { PgQueryable } from './pg-document-scan.js';
import type { PgChangeFeed } from './pg-change-feed.js';
import type { PgDocumentHistory } from './pg-document-history.js';
import { changeChannel, notifyPayload } from './pg-change-log.js';
import { changeLogText } from '../change-log.js';
import { documentKey, keyedLookup } from './pg-keyed.js';
import { pathKey, pgRowColumns, rowFromPg, type PgRowShape } from './pg-document-scan.js';
import { combinedStatement, documentChangeStatements, type PgStatement } from './pg-document-writes.js';
import { inlineStatement, inlineStatements } from './pg-inline.js';
import type { TriggerEventSelector } from '../trigger-events.js';

export type Decide<T> = (current: Map<string, DocumentRow>, commitTime: number) => { changes: DocumentChange[]; result: T };

/** One commit waiting for (or riding in) a group. */
interface Member {
  paths: readonly string[];
  decide: Decide<unknown>;
  resolve: (value: { result: unknown; commitTime: number }) => void;
  reject: (error: unknown) => void;
}

/** How one member of a group came out, known only once the group's COMMIT has returned. */
type Outcome = { ok: true; result: unknown; commitTime: number } | { ok: false; error: unknown };

interface Committed {
  seq: number;
  commitTime: number;
  changes: StoredChange[];
}

interface Queue {
  pending: Member[];
  /** A group is locking, reading or deciding: the next one waits until it sends its COMMIT. */
  opening: boolean;
  /** Groups not finished yet (at most two, but for a retry). */
  inFlight: number;
}

/**
 * Group commit for one instance (as sqlite-commit-group.ts does for SQLite). Every commit of a
 * database takes its fs_meta row and holds it through COMMIT, fsync included, so commits of one
 * database are serial; the commits that arrive while one is in flight wait and then go together
 * in ONE PostgreSQL transaction and one fsync. A lone commit starts at once (no timer): the next
 * group forms while the current one is in flight, and starts once that one sends its COMMIT. Inside a group each commit is decided in arrival
 * order on the rows as the earlier ones left them and gets its own commit time (strictly
 * increasing), sequence and fs_changes row; one refused by `decide` writes nothing and the group
 * goes on. The group's writes then go in one round trip; should one of its statements fail, the
 * group runs again with each member's writes inside a SAVEPOINT of its own, so the failing one is
 * undone alone. Nothing is acknowledged before the group's COMMIT; a failure of the whole
 * transaction fails every member (retried whole where PostgreSQL says so).
 */
export class PgCommitGroups {
  private readonly queues = new Map<string, Queue>();
  /** Which trigger events a change raises (functions/), stored in the commit's own transaction. */
  triggerEvents: TriggerEventSelector | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly history: PgDocumentHistory,
    private readonly feed: PgChangeFeed | undefined,
  ) {}

  submit<T>(db: string, paths: readonly string[], decide: Decide<T>): Promise<{ result: T; commitTime: number }> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(db);
      if (!queue) this.queues.set(db, (queue = { pending: [], opening: false, inFlight: 0 }));
      queue.pending.push({ paths, decide, resolve: resolve as Member['resolve'], reject });
      this.pump(db, queue);
    });
  }

  /**
   * The next group starts as soon as the current one sends its COMMIT: its locks and reads then
   * overlap that round trip and the fsync, and its fs_meta lock waits for them (whoever holds
   * fs_meta already holds all its document locks, so there is no cycle).
   */
  private pump(db: string, queue: Queue): void {
    if (queue.opening) return;
    if (queue.pending.length === 0) {
      if (queue.inFlight === 0) this.queues.delete(db);
      return;
    }
    queue.opening = true;
    queue.inFlight++;
    const members = takeGroup(queue.pending);
    let released = false;
    const release = (deferred: readonly Member[]) => {
      if (released) return;
      released = true;
      // Members past the group's byte cap were not decided: first in line for the next group.
      queue.pending.unshift(...deferred);
      queue.opening = false;
      this.pump(db, queue);
    };
    void this.runWithRetry(db, members, release)
      .catch((error: unknown) => {
        for (const member of members) member.reject(error);
      })
      .then(() => {
        queue.inFlight--;
        release([]);
        if (queue.inFlight === 0 && !queue.opening && queue.pending.length === 0) this.queues.delete(db);
      });
  }

  /** Runs one group to its end, settling its members; `release` hands the queue to the next group. */
  private async runWithRetry(db: string, group: Member[], release: (deferred: readonly Member[]) => void): Promise<void> {
    let careful = false;
    let members = group;
    const handOver = (deferred: readonly Member[]) => {
      // A retry runs without them: they are the next group's.
      if (deferred.length) members = members.filter((member) => !deferred.includes(member));
      release(deferred);
    };
    for (let attempt = 1; ; attempt++) {
      let client: PgClient | undefined;
      try {
        client = await this.pool.connect();
        const { outcomes, committed } = await this.runGroup(client, db, members, careful, handOver);
        client.release();
        client = undefined;
        // After COMMIT and in sequence order: this instance's listeners hear of them at once.
        for (const commit of committed) this.feed?.local(db, commit.seq, { kind: 'commit', db, commitTime: commit.commitTime, changes: commit.changes });
        outcomes.forEach((outcome, i) => {
          const member = members[i]!;
          if (outcome.ok) member.resolve({ result: outcome.result, commitTime: outcome.commitTime });
          else member.reject(outcome.error);
        });
        return;
      } catch (error) {
        if (client) {
          await client.query('ROLLBACK').catch(() => undefined);
          client.release();
        }
        // Locks are taken in order, so these are rare (a lock the server itself takes); the group is whole or absent.
        if (isRetryable(error) && attempt < 5) continue;
        // A statement of one member failed in the group's single round trip: again, one member at a time, to fail only that one.
        if (!careful && members.length > 1 && isStatementError(error)) {
          careful = true;
          continue;
        }
        for (const member of members) member.reject(error);
        return;
      }
    }
  }

  /** The events a member's changes raise, as one INSERT (the path's NULs, which text refuses, shown as U+FFFD: the payload holds the truth). */
  private triggerEventStatement(db: string, stored: readonly StoredChange[], commitTime: number): PgStatement | undefined {
    if (!this.triggerEvents) return undefined;
    const ids: string[] = [];
    const targets: string[] = [];
    const paths: string[] = [];
    const payloads: string[] = [];
    for (const change of stored) {
      for (const event of this.triggerEvents(db, change, commitTime)) {
        ids.push(event.id);
        targets.push(event.target);
        paths.push(change.path.replaceAll('\u0000', '\uFFFD'));
        payloads.push(event.payload);
      }
    }
    if (!ids.length) return undefined;
    return {
      sql: `INSERT INTO fn_events (id, target, db, path, commit_time, payload, next_at)
            SELECT e.id, e.target, $1, e.path, $2, e.payload, $3 FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS e(id, target, path, payload)
            ON CONFLICT DO NOTHING`,
      params: [db, commitTime, Date.now(), ids, targets, paths, payloads],
    };
  }

  /**
   * Every member is decided in JS on the rows as the earlier members leave them; then all their
   * writes, fs_meta and COMMIT go in one round trip. Should a statement fail there, the group runs
   * again `careful`ly: each member's writes in a round trip of their own inside a SAVEPOINT, so a
   * failing one is rolled back alone.
   */
  private async runGroup(
    client: PgClient,
    db: string,
    members: Member[],
    careful: boolean,
    release: (deferred: readonly Member[]) => void,
  ): Promise<{ outcomes: Outcome[]; committed: Committed[] }> {
    const paths = [...new Set(members.flatMap((member) => member.paths))];
    // One round trip: locks, then (each statement with its own snapshot, taken once they are held) the rows and fs_meta.
    const opening = await client.query(
      `BEGIN; SELECT pg_advisory_xact_lock(k) FROM unnest('{${lockKeys(db, paths).join(',')}}'::bigint[]) AS k; ` +
        inlineStatements([readRowsStatement(db, paths), lockMetaStatement(db)]),
    ) as unknown as Array<pg.QueryResult>;
    // The rows as the group's commits so far leave them (undefined: deleted by one of them).
    const rows = new Map<string, DocumentRow | undefined>(rowsFrom(opening[2]!.rows as PgRowShape[]));
    const meta = metaFrom(opening[3]!.rows as MetaShape[], db);
    const alone = members.length === 1;
    const outcomes: Outcome[] = [];
    const committed: Committed[] = [];
    let lastCommitTime = meta.lastCommitTime;
    let seq = meta.seq;
    let writtenBytes = 0;
    /** Members' writes not sent yet (all of them unless careful). */
    const batch: string[] = [];
    for (const [i, member] of members.entries()) {
      if (writtenBytes >= maxGroupBytes) {
        release(members.slice(i));
        return this.finish(client, db, meta.seq, seq, lastCommitTime, outcomes, committed, batch);
      }
      const current = new Map<string, DocumentRow>();
      for (const path of member.paths) {
        const row = rows.get(path);
        if (row) current.set(path, row);
      }
      const commitTime = Math.max(Math.floor(Date.now() * 1000), lastCommitTime + 1);
      let decided: { changes: DocumentChange[]; result: unknown };
      let nextSeq: number;
      let text: string;
      const stored: StoredChange[] = [];
      try {
        decided = member.decide(current, commitTime);
        const replaced = decided.changes.flatMap((change) => {
          const before = current.get(change.path);
          return before && before.updateTime !== change.row?.updateTime ? [before] : [];
        });
        for (const change of decided.changes) stored.push({ path: change.path, before: current.get(change.path), after: change.row });
        const writes = [...this.history.keepStatement(db, replaced, commitTime), ...documentChangeStatements(db, decided.changes)];
        const events = this.triggerEventStatement(db, stored, commitTime);
        if (events) writes.push(events);
        nextSeq = stored.length ? seq + 1 : seq;
        if (stored.length) writes.push({ sql: 'INSERT INTO fs_changes (db, seq, commit_time, changes) VALUES ($1, $2, $3, $4)', params: [db, nextSeq, commitTime, changeLogText(stored)] });
        // A group of one needs no savepoint (its failure is the transaction's): writes, fs_meta, NOTIFY and COMMIT in one round trip.
        text = alone
          ? `${inlineStatement(combinedStatement([...writes, metaUpdate(db, nextSeq, commitTime)], notifyStatement(db, meta.seq, nextSeq)))}; COMMIT`
          : writes.length ? `${careful ? `SAVEPOINT m${i}; ` : ''}${inlineStatement(combinedStatement(writes, { sql: 'SELECT 1', params: [] }))}` : '';
      } catch (error) {
        // Refused before anything of it was written: it fails alone, the group goes on.
        outcomes.push({ ok: false, error });
        continue;
      }
      if (alone) {
        release([]);
        await client.query(text);
        return { outcomes: [{ ok: true, result: decided.result, commitTime }], committed: stored.length ? [{ seq: nextSeq, commitTime, changes: stored }] : [] };
      }
      if (text && !careful) batch.push(text);
      if (text && careful) {
        // Savepoints stay open (nested, at most one per member): rolling back to this one undoes exactly this member.
        try {
          await client.query(text);
        } catch (error) {
          if (isRetryable(error)) throw error;
          // If even the rollback fails (the savepoint was never made, the connection is gone), the whole group fails.
          await client.query(`ROLLBACK TO SAVEPOINT m${i}`);
          outcomes.push({ ok: false, error });
          continue;
        }
      }
      for (const change of decided.changes) rows.set(change.path, change.row);
      for (const change of decided.changes) writtenBytes += change.row ? Buffer.byteLength(change.row.fields) : 0;
      outcomes.push({ ok: true, result: decided.result, commitTime });
      if (stored.length) committed.push({ seq: nextSeq, commitTime, changes: stored });
      lastCommitTime = commitTime;
      seq = nextSeq;
    }
    release([]);
    return this.finish(client, db, meta.seq, seq, lastCommitTime, outcomes, committed, batch);
  }

  /** The group's last time and sequence into fs_meta, one NOTIFY up to that sequence, COMMIT. */
  private async finish(
    client: PgClient,
    db: string,
    startSeq: number,
    seq: number,
    lastCommitTime: number,
    outcomes: Outcome[],
    committed: Committed[],
    batch: readonly string[],
  ): Promise<{ outcomes: Outcome[]; committed: Committed[] }> {
    if (outcomes.some((outcome) => outcome.ok)) {
      await client.query([...batch, inlineStatement(combinedStatement([metaUpdate(db, seq, lastCommitTime)], notifyStatement(db, startSeq, seq))), 'COMMIT'].join('; '));
    } else {
      await client.query('ROLLBACK');
    }
    return { outcomes, committed };
  }
}

/** Most commits in one group: each writes in a subtransaction, and past 64 of them every session's snapshots get slower (the subxid cache overflows). */
const maxCommitsPerGroup = 64;
/** Most documents named by one group's commits (locked and read together). */
const maxPathsPerGroup = 500;
/** Past this many bytes of written fields, the rest of a group waits for the next one. */
const maxGroupBytes = 4 * 1024 * 1024;

/** The next group from the front of the queue: at least one commit, then as many as fit. */
function takeGroup(pending: Member[]): Member[] {
  const group = [pending.shift()!];
  let paths = group[0]!.paths.length;
  while (pending.length && group.length < maxCommitsPerGroup && paths + pending[0]!.paths.length <= maxPathsPerGroup) {
    const next = pending.shift()!;
    paths += next.paths.length;
    group.push(next);
  }
  return group;
}

/** fs_meta's new time and sequence. */
function metaUpdate(db: string, seq: number, lastCommitTime: number): PgStatement {
  return { sql: 'UPDATE fs_meta SET last_commit_time = $2, seq = $3 WHERE db = $1', params: [db, lastCommitTime, seq] };
}

/** A NOTIFY when the sequence moved: the other instances' feeds read up to it. */
function notifyStatement(db: string, startSeq: number, seq: number): PgStatement {
  return { sql: `SELECT CASE WHEN $1 THEN pg_notify('${changeChannel}', $2) END`, params: [seq > startSeq, notifyPayload(db, seq)] };
}

function readRowsStatement(db: string, paths: readonly string[]): PgStatement {
  const keys = [...new Set(paths)].map(pathKey);
  return {
    sql: keyedLookup('fs_documents', documentKey, pgRowColumns),
    params: [db, keys.map((key) => key.parent), keys.map((key) => key.docId)],
  };
}

function rowsFrom(found: readonly PgRowShape[]): Map<string, DocumentRow> {
  const rows = new Map<string, DocumentRow>();
  for (const shape of found) {
    const row = rowFromPg(shape);
    rows.set(row.path, row);
  }
  return rows;
}

export async function readRows(queryable: PgQueryable, db: string, paths: readonly string[]): Promise<Map<string, DocumentRow>> {
  if (paths.length === 0) return new Map();
  const statement = readRowsStatement(db, paths);
  return rowsFrom((await queryable.query<PgRowShape>(statement.sql, statement.params)).rows);
}

interface MetaShape {
  last_commit_time: string;
  seq: string;
}

function lockMetaStatement(db: string): PgStatement {
  return { sql: 'SELECT last_commit_time, seq FROM fs_meta WHERE db = $1 FOR UPDATE', params: [db] };
}

function metaFrom(rows: readonly MetaShape[], db: string): { lastCommitTime: number; seq: number } {
  const row = rows[0];
  if (!row) throw new Error(`fs_meta has no row for ${db}`);
  return { lastCommitTime: Number(row.last_commit_time), seq: Number(row.seq) };
}

export async function lockMeta(client: PgClient, db: string): Promise<{ lastCommitTime: number; seq: number }> {
  const statement = lockMetaStatement(db);
  return metaFrom((await client.query<MetaShape>(statement.sql, statement.params)).rows, db);
}

/** One advisory lock key per document (64 bits of a hash of database and path), sorted: every commit locks in the same order. */
function lockKeys(db: string, paths: readonly string[]): string[] {
  const keys = new Set<bigint>();
  for (const path of paths) keys.add(createHash('sha256').update(db).update('\u0000').update(path).digest().readBigInt64BE(0));
  return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

/** Serialization failure and deadlock: the transaction was rolled back whole and can run again. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/**
 * PostgreSQL refused a statement for what it holds (bad data, a constraint, a limit, a statement
 * it cannot run): the transaction did not commit, and running it again, one member at a time,
 * finds the member at fault. Not so for a lost connection or a shutdown: COMMIT may have happened,
 * so those fail the group rather than risk applying it twice.
 */
function isStatementError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && /^(22|23|42|54)/.test(error.code ?? '');
}
