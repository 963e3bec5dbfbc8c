import type { DocumentStore } from './document-store.js';

/**
 * A store whose reads can interleave with other processes' commits (PostgreSQL) offers a view
 * bound to one snapshot, so that the several scans of one query see one state of the data, as
 * SQLite's synchronous reads do by themselves. Separate from DocumentStore so that stores without
 * the need implement nothing.
 */
export interface SnapshotReads {
  inSnapshot<T>(work: (view: DocumentStore) => Promise<T>): Promise<T>;
}

export function hasSnapshotReads(store: DocumentStore): store is DocumentStore & SnapshotReads {
  return typeof (store as Partial<SnapshotReads>).inSnapshot === 'function';
}
