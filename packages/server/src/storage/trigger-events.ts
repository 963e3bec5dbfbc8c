/**
 * Trigger events: what a committed change owes a function (functions/), kept in the same store and
 * written in the same transaction as the change itself, so a commit acknowledged to its client
 * always has its events, and a crash loses neither. The store knows nothing of functions: the
 * selector, installed by the functions domain, says which events a change raises; the dispatcher
 * claims due events under a lease, then settles each (done: removed; failed: due again later, or
 * set aside after too many tries).
 */
import type { StoredChange } from './change-feed.js';

export interface NewTriggerEvent {
  /** Stable across redeliveries: the CloudEvent id / v1 eventId. */
  id: string;
  /** The function it is for. */
  target: string;
  /** What the function needs, as text (the selector's format). */
  payload: string;
}

/** An event with where it comes from, as stored outside a document commit. */
export type RaisedTriggerEvent = NewTriggerEvent & { db: string; path: string; commitTime: number };

/**
 * Events an identity commit raises (v1 Auth onCreate / onDelete), stored in that commit's own
 * transaction (storage/store.ts applies it with the account's row): an id already stored is left as it is.
 */
export interface TriggerEventMutation {
  kind: 'insertTriggerEvents';
  events: RaisedTriggerEvent[];
  /** ms: when they are first due. */
  now: number;
}

/**
 * Runs inside a commit, once per changed document, synchronously: must be cheap and must not throw
 * for a change it does not care about (a throw aborts the commit).
 */
export type TriggerEventSelector = (db: string, change: StoredChange, commitTime: number) => NewTriggerEvent[];

export interface TriggerEvent extends NewTriggerEvent {
  db: string;
  path: string;
  /** µs. */
  commitTime: number;
  /** Deliveries tried so far (the one being claimed not counted). */
  attempts: number;
  /** ms since the epoch: not delivered before. */
  nextAt: number;
  setAside: boolean;
  lastError: string | undefined;
}

export interface TriggerEventStore {
  /**
   * Up to `limit` due events (not set aside, `nextAt` passed, no live lease), each leased to
   * `owner` until `now + leaseMs`: no other claim returns it before then.
   */
  claim(owner: string, now: number, leaseMs: number, limit: number): Promise<TriggerEvent[]>;
  /** Delivered: the event is removed (only while `owner` holds its lease; false otherwise). */
  succeed(id: string, owner: string): Promise<boolean>;
  /** Failed: tried once more, due again at `nextAt`, or set aside; the lease is released. */
  fail(id: string, owner: string, update: { nextAt: number; error: string; setAside: boolean }): Promise<boolean>;
  /** Events waiting (or set aside), oldest first, for the console. */
  list(options: { setAside: boolean; limit: number }): Promise<TriggerEvent[]>;
  /** A set-aside event is due again now, its tries counted from zero. */
  requeue(id: string, now: number): Promise<boolean>;
  counts(): Promise<{ pending: number; setAside: number }>;
  /**
   * Events raised outside a document commit (from a log of their own, such as Cloud Storage's
   * object events): an id already stored is left as it is, so a source read again raises nothing twice.
   */
  insert(events: readonly RaisedTriggerEvent[], now: number): Promise<void>;
  /** How far a source has been read (`undefined` at first), and moving it on. */
  cursor(source: string): Promise<string | undefined>;
  setCursor(source: string, value: string): Promise<void>;
}

/** The row shape both stores select. */
export interface TriggerEventRow {
  id: string;
  target: string;
  db: string;
  path: string;
  commit_time: number | string;
  payload: string;
  attempts: number;
  next_at: number | string;
  set_aside: number | boolean;
  last_error: string | null;
}

export function triggerEventOf(row: TriggerEventRow): TriggerEvent {
  return {
    id: row.id,
    target: row.target,
    db: row.db,
    path: row.path,
    commitTime: Number(row.commit_time),
    payload: row.payload,
    attempts: row.attempts,
    nextAt: Number(row.next_at),
    setAside: row.set_aside === true || row.set_aside === 1,
    lastError: row.last_error ?? undefined,
  };
}
