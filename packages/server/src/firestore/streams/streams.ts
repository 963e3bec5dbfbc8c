import type { FirestoreAccess } from '../api/access.js';
import type { DocumentDatabase } from '../core/database.js';
import { ListenHub } from './listen-hub.js';
import { ListenSession } from './listen-stream.js';
import type { StreamContext, StreamKind, StreamOpener, StreamSession, StreamSink } from './stream.js';
import { WriteSession } from './write-stream.js';

/** Opens Listen and Write sessions for any transport. */
export class FirestoreStreams implements StreamOpener {
  private readonly hub: ListenHub;

  constructor(
    private readonly database: DocumentDatabase,
    private readonly access: FirestoreAccess,
  ) {
    this.hub = new ListenHub(database);
  }

  open(kind: StreamKind, context: StreamContext, sink: StreamSink): StreamSession {
    if (kind === 'Write') return new WriteSession(this.database, this.access, context, sink);
    return new ListenSession(this.database, this.hub, this.access, context, sink);
  }

  close(): void {
    this.hub.close();
  }
}
