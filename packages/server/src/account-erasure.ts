import type { Logger } from 'pino';
import type { DocumentDatabase } from './firestore/core/database.js';
import type { AccountErasure, Store } from './storage/store.js';

/** What erasing an account's data needs of the document database and file storage. */
export interface ErasureDeps {
  store: Store;
  documents: DocumentDatabase;
  eraseUserFiles(projectId: string, uid: string): Promise<number>;
  /** Whose data is erased: the web app's project (its notes live under users/{uid}). */
  projectId: string;
  logger: Logger;
  /** How often the queue is looked at (an account deleted here wakes it at once). */
  pollMs?: number;
}

export interface AccountErasures {
  /** Runs the queue now (after an account was deleted), unless it is running. */
  wake(): void;
  /** Waits for the run under way, and stops. */
  stop(): Promise<void>;
}

const defaultPollMs = 5_000;
const perRun = 50;

/**
 * Deleting an account of the web app's project erases its data: the documents under users/{uid}
 * (its notes, at any depth) in the project's (default) database, and its files under users/{uid}/
 * in the project's default buckets. The deletion queues the erasure in its own commit (storage
 * AccountErasure); this worker works the queue, on start too, so an erasure a crash cut short is
 * finished after the restart. Each step is idempotent: a repeated erasure finds less to delete.
 * Accounts of other projects and of tenants are only deleted, as on Firebase (their apps keep their
 * own data): their queue entries are dropped.
 */
export function startAccountErasures(deps: ErasureDeps): AccountErasures {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const eraseOne = async (erasure: AccountErasure): Promise<void> => {
    // The realm key is the project id itself only for the project's own accounts (no tenant).
    if (erasure.projectId === deps.projectId) {
      const db = { projectId: deps.projectId, databaseId: '(default)' };
      let documents = 0;
      for (let deleted; !stopped && (deleted = await deps.documents.deleteTree(db, `users/${erasure.localId}`)) > 0; ) documents += deleted;
      if (stopped) return;
      const files = await deps.eraseUserFiles(deps.projectId, erasure.localId);
      deps.logger.info({ uid: erasure.localId, documents, files }, 'erased a deleted account’s documents and files');
    }
    await deps.store.commit([{ kind: 'deleteAccountErasure', projectId: erasure.projectId, localId: erasure.localId }]);
  };

  const run = async (): Promise<void> => {
    do {
      again = false;
      const queued = await deps.store.listAccountErasures(perRun);
      for (const erasure of queued) {
        if (stopped) return;
        await eraseOne(erasure);
      }
      if (queued.length === perRun) again = true;
    } while (again && !stopped);
  };

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = run()
      .catch((err: unknown) => deps.logger.error({ err }, 'erasing a deleted account’s data failed; it is tried again'))
      .finally(() => {
        running = undefined;
      });
  };
  const poll = setInterval(wake, deps.pollMs ?? defaultPollMs);
  poll.unref();
  wake();
  return {
    wake,
    async stop() {
      stopped = true;
      clearInterval(poll);
      await running;
    },
  };
}
