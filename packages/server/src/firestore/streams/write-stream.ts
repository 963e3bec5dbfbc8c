import { toApiError } from '../../http/error-handler.js';
import type { FirestoreAccess } from '../api/access.js';
import type { DocumentDatabase } from '../core/database.js';
import { firestoreErrors } from '../core/errors.js';
import { databaseName } from '../core/paths.js';
import { formatMicros } from '../core/value-wire.js';
import { parseWrites, writeResultToWire } from '../core/writes.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';
import type { StreamContext, StreamSession, StreamSink } from './stream.js';

let streamIds = 0;

/**
 * The Write stream: a handshake answered with a stream id and token, then one response per
 * request, in order, each a committed batch with its results and commit time. A failed batch
 * ends the stream with its error (the SDK then rejects that batch and reopens the stream).
 */
export class WriteSession implements StreamSession {
  private handshaken = false;
  private closed = false;
  private sequence = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly streamId = String(++streamIds);

  constructor(
    private readonly database: DocumentDatabase,
    private readonly access: FirestoreAccess,
    private readonly context: StreamContext,
    private readonly sink: StreamSink,
  ) {}

  receive(request: unknown): void {
    // Requests are answered strictly in order, even though a commit may wait for locks.
    this.queue = this.queue.then(() => this.handle(request)).catch((error: unknown) => this.end(error));
  }

  close(): void {
    this.closed = true;
  }

  private async handle(raw: unknown): Promise<void> {
    if (this.closed) return;
    const request = wireObject(raw, 'WriteRequest');
    onlyKeys(request, ['database', 'streamId', 'writes', 'streamToken', 'labels'], 'WriteRequest');
    if (request.database !== undefined && request.database !== databaseName(this.context.db)) {
      throw firestoreErrors.invalidArgument(`Database ${String(request.database)} does not match the stream's ${databaseName(this.context.db)}.`);
    }
    if (!this.handshaken) {
      this.handshaken = true;
      if (Array.isArray(request.writes) && request.writes.length) throw firestoreErrors.invalidArgument('The first request of a Write stream is the handshake and carries no writes.');
      this.sink.send({ streamId: this.streamId, streamToken: this.token() });
      return;
    }
    const judge = this.access.judge(this.context.caller, this.context.db);
    const writes = parseWrites(this.context.db, request.writes);
    if (!writes.length) await judge.ensureAccess();
    const outcome = writes.length
      ? await this.database.commit(this.context.db, writes, undefined, judge.writes({ batch: writes.length > 1 }))
      : { writeResults: [], commitTime: await this.database.readTime(this.context.db) };
    if (this.closed) return;
    this.sink.send({
      streamToken: this.token(),
      writeResults: outcome.writeResults.map(writeResultToWire),
      commitTime: formatMicros(outcome.commitTime),
    });
  }

  private token(): string {
    return Buffer.from(String(this.sequence++)).toString('base64');
  }

  private end(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.sink.fail(toApiError(error));
  }
}
