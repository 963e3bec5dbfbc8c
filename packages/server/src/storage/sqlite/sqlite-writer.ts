import { Worker } from 'node:worker_threads';
import { StorageUnavailable } from '../document-store.js';
import type { WriteBatch } from './sqlite-write-batch.js';
import { PackingArena } from './sqlite-write-packing.js';
import type { WriterData, WriterReply, WriterRequest } from './sqlite-writer-protocol.js';

/** A group the writer thread refused (SQLite's error, e.g. a full disk): nothing of it was written. */
export class WriteFailed extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'WriteFailed';
  }
}

/**
 * The main thread's side of the document writer thread (sqlite-writer-thread.ts): started on the
 * first write, one request in flight at a time (CommitGroups sends the next group only after this
 * one's answer). Should the thread die, the write in flight fails with StorageUnavailable (its
 * transaction was never committed, so SQLite rolls it back) and the next write starts a new thread.
 */
export class SqliteWriter {
  private worker: Worker | undefined;
  private nextId = 1;
  private inFlight: { id: number; resolve: () => void; reject: (error: Error) => void } | undefined;
  private closed = false;
  /** Where each group's text and BLOBs are packed; reused, as one group is in flight at a time. */
  private readonly arena = new PackingArena();

  constructor(
    private readonly file: string,
    private readonly latch?: Int32Array,
  ) {}

  write(batch: WriteBatch): Promise<void> {
    if (this.closed) return Promise.reject(new StorageUnavailable('The document store is closed.'));
    if (this.inFlight) return Promise.reject(new Error('one group at a time'));
    const worker = this.running();
    const id = this.nextId++;
    const writes = batch.pack(this.arena);
    return new Promise<void>((resolve, reject) => {
      this.inFlight = { id, resolve, reject };
      // The thread must outlive a script whose only pending work is this commit; idle, it must not
      // keep the process alive.
      worker.ref();
      worker.postMessage({ kind: 'write', id, writes } satisfies WriterRequest);
    });
  }

  /** Stops the thread: call once no write is in flight (CommitGroups.close waits for that). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // until it has closed its connection
    worker.postMessage({ kind: 'close' } satisfies WriterRequest);
    await exited;
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const data: WriterData = { file: this.file, ...(this.latch ? { latch: this.latch } : {}) };
    const worker = new Worker(new URL('./sqlite-writer-boot.mjs', import.meta.url), { workerData: data });
    worker.unref();
    worker.on('message', (reply: WriterReply) => {
      const pending = this.inFlight;
      if (!pending || pending.id !== reply.id) return;
      this.inFlight = undefined;
      worker.unref();
      if (reply.ok) pending.resolve();
      else pending.reject(new WriteFailed(reply.message, reply.code));
    });
    // An uncaught error ends the thread too: 'exit' follows and settles what was in flight.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      const pending = this.inFlight;
      this.inFlight = undefined;
      pending?.reject(new StorageUnavailable('The document writer stopped before the commit was written; nothing of it was stored.'));
    });
    this.worker = worker;
    return worker;
  }
}
