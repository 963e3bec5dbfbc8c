import type { FirestoreAccess } from '../api/access.js';
import type { DocumentDatabase } from '../core/database.js';
import { firestoreErrors } from '../core/errors.js';
import type { StreamContext, StreamKind, StreamOpener, StreamSession, StreamSink } from './stream.js';
import { WriteSession } from './write-stream.js';

/** Opens Listen and Write sessions for any transport. */
export class FirestoreStreams implements StreamOpener {
  constructor(
    private readonly database: DocumentDatabase,
    private readonly access: FirestoreAccess,
  ) {}

  open(kind: StreamKind, context: StreamContext, sink: StreamSink): StreamSession {
    if (kind === 'Write') return new WriteSession(this.database, this.access, context, sink);
    sink.fail(firestoreErrors.unimplemented('The Listen stream is being built.'));
    return { receive: () => undefined, close: () => undefined };
  }
}
