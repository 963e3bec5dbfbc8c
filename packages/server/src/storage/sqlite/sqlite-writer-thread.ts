/**
 * The document writer thread: its own connection to the SQLite file, running each group's packed
 * statements in one IMMEDIATE transaction. SQLite's work for a big commit (B-tree inserts, the WAL
 * append, the fsync of synchronous=FULL) happens here, so the main thread's event loop keeps serving
 * reads meanwhile. The main thread sends one group at a time and decides the next only after this
 * one's answer, so reads there see every acknowledged write.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { BatchRunner, unpack } from './sqlite-write-batch.js';
import type { WriterData, WriterReply, WriterRequest } from './sqlite-writer-protocol.js';

const { file, latch } = workerData as WriterData;
const port = parentPort!;

const db = new Database(file);
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');
// SQLite's automatic checkpoint (past 1,000 pages of log) runs in the COMMIT that crosses it: after a
// big group, here, so the main connection's own checkpoints find little left to copy.
const runner = new BatchRunner(db);

const runGroup = db.transaction((request: Extract<WriterRequest, { kind: 'write' }>) => {
  runner.run(unpack(request.writes));
  holdForTest();
});

/**
 * Tests only: with the latch armed (1), the thread stops before COMMIT until the test disarms it,
 * so a test can do things while a group is being written; armed with 2, the thread dies there (a
 * crash with the transaction open: SQLite rolls it back).
 */
function holdForTest(): void {
  if (!latch) return;
  const mode = Atomics.load(latch, 0);
  if (mode === 0) return;
  Atomics.store(latch, 1, 1);
  Atomics.notify(latch, 1);
  if (mode === 2) process.exit(70);
  Atomics.wait(latch, 0, mode);
  Atomics.store(latch, 1, 0);
}

port.on('message', (request: WriterRequest) => {
  if (request.kind === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: WriterReply;
  try {
    runGroup.immediate(request);
    reply = { id: request.id, ok: true };
  } catch (error) {
    const sqliteCode = error instanceof Database.SqliteError ? error.code : undefined;
    reply = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error), ...(sqliteCode ? { code: sqliteCode } : {}) };
  }
  port.postMessage(reply);
});
