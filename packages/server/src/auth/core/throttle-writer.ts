import type { Mutation, Store } from '../../storage/store.js';

type ThrottleMutation = Extract<Mutation, { kind: 'putThrottleRecord' | 'deleteThrottleRecord' | 'deleteExpiredThrottleRecords' }>;

/**
 * The throttles' write-through to the store, one commit per event-loop turn for all of them.
 *
 * A password sign-in changes three throttle rows when it is admitted and three again when it
 * succeeds; written one commit each, that was six durable commits (six fsyncs on SQLite, each
 * blocking the event loop) beside the sign-in's own. Here every throttle change of a turn, from
 * every throttle and every request, goes into one commit, and a row changed twice in a batch is
 * written once, with its last state (a put is the whole state, a delete removes it). The rows of a
 * batch are written in key order, so two instances sharing PostgreSQL lock them in the same order.
 * Batches are committed one after the other, in the order their changes were made.
 */
export class ThrottleWriter {
  private pending = new Map<string, ThrottleMutation>();
  private sweep: ThrottleMutation | undefined;
  private batch: Promise<void> | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store) {}

  /** Resolves (or rejects) when the commit holding this change is done. */
  write(mutation: ThrottleMutation): Promise<void> {
    if (mutation.kind === 'deleteExpiredThrottleRecords') this.sweep = mutation;
    else {
      const key = mutation.kind === 'putThrottleRecord' ? `${mutation.record.scope}\u0000${mutation.record.keyHash}` : `${mutation.scope}\u0000${mutation.keyHash}`;
      // Re-inserted, so the map's order stays the order of last change (the sort below decides the write order anyway).
      this.pending.delete(key);
      this.pending.set(key, mutation);
    }
    this.batch ??= this.schedule();
    return this.batch;
  }

  private schedule(): Promise<void> {
    const previous = this.last;
    const batch = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => previous.catch(() => undefined))
      .then(() => {
        const mutations: Mutation[] = [...this.pending.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, mutation]) => mutation);
        if (this.sweep) mutations.push(this.sweep);
        this.pending = new Map();
        this.sweep = undefined;
        this.batch = undefined;
        return this.store.commit(mutations);
      });
    this.last = batch;
    return batch;
  }
}

const writers = new WeakMap<Store, ThrottleWriter>();

/** The one writer of a store, shared by every throttle over it. */
export function throttleWriterOf(store: Store): ThrottleWriter {
  let writer = writers.get(store);
  if (!writer) {
    writer = new ThrottleWriter(store);
    writers.set(store, writer);
  }
  return writer;
}
