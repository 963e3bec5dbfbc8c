/** The shapes DocumentDatabase takes and gives (reads' consistency, commits' outcomes, events and plans). */
import type { ChangeFeed } from '../../storage/change-feed.js';
import type { CompositeIndex } from './composite-indexes.js';
import type { Doc } from './documents.js';
import type { DatabaseId } from './paths.js';
import type { QueryLimits } from './query.js';
import type { ServerTransaction } from './transactions.js';
import type { VectorIndex } from './vector-indexes.js';
import type { WriteResult } from './writes.js';

/**
 * How a read sees the data: now, inside a server transaction (a read-write one records what it
 * reads, and locks it when it is pessimistic; a read-only one reads at its snapshot time), or as
 * it was at a past time (µs, checked with `checkReadTime` first).
 */
export type ReadConsistency = { transaction?: ServerTransaction; readTime?: number };

/**
 * Judges the exact versions a read found (security rules); throws PERMISSION_DENIED to refuse.
 * It runs before the read is answered and before its transaction records or locks anything, so a
 * refused read leaves no trace.
 */
export type FoundDocumentsCheck = (docs: ReadonlyMap<string, Doc>) => Promise<unknown>;
/** The same for a query's answer, in its order. */
export type QueryAnswerCheck = (docs: readonly Doc[]) => Promise<void>;

export interface CommitOutcome {
  writeResults: WriteResult[];
  commitTime: number;
  /** Each written document as the commit left it (undefined: deleted or absent). */
  documents: Map<string, Doc | undefined>;
}

/** One committed change of one document, for listeners. */
export interface CommittedChange {
  path: string;
  before: Doc | undefined;
  after: Doc | undefined;
}

export interface CommitEvent {
  db: DatabaseId;
  dbKey: string;
  commitTime: number;
  changes: CommittedChange[];
}

/**
 * What a commit would do, worked out before it is made, for security rules. For each document
 * actually written (not only verified): what kind of write it is, the document as stored and the
 * document the whole batch leaves (undefined: absent). A write's precondition says its kind, as
 * Google's emulator judges it: `exists: false` is a create and `exists: true` or an update time an
 * update, whatever is stored (the stored document is still `resource`); otherwise what is stored
 * decides.
 */
export interface CommitPlan {
  /** The request time that server timestamps will take. */
  requestTime: number;
  kinds: ReadonlyMap<string, 'create' | 'update' | 'delete'>;
  /** The documents as stored when planned (verified ones too): the commit is made only if they are still so. */
  stored: ReadonlyMap<string, Doc | undefined>;
  after: ReadonlyMap<string, Doc | undefined>;
  /**
   * Documents the commit only verifies (a precondition and nothing written: client SDKs'
   * transactions send one per document read and not written). Their outcome tells whether the
   * document exists and its update time, so each is a read of the stored version.
   */
  verified: readonly string[];
}

/** Throws (PERMISSION_DENIED) to refuse a commit; runs before anything is written. */
export type CommitAuthorizer = (plan: CommitPlan) => Promise<void>;

export interface DatabaseOptions {
  queryLimits: QueryLimits;
  compositeIndexes: readonly CompositeIndex[];
  /** How long replaced and deleted versions stay readable at a past time (Firestore: one hour). */
  versionRetentionMs?: number;
  /** Declared vector indexes; findNearest needs one unless `anyVectorField` (--dev, as the emulator). */
  vectorIndexes?: readonly VectorIndex[];
  anyVectorField?: boolean;
  /**
   * A store shared by several processes supplies the commits of all of them; listeners then hear
   * every commit (this process's too) from the feed alone, so none is told twice.
   */
  changeFeed?: ChangeFeed;
  /** The mark this process's transaction ids start with (a worker's names it); default: random when a change feed is shared. */
  instanceTag?: Buffer;
}

export const defaultVersionRetentionMs = 3600_000;
