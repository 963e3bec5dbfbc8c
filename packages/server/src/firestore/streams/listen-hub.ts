import { firestoreMetrics } from '../../http/metrics.js';
import type { CommitEvent, CommittedChange, DocumentDatabase } from '../core/database.js';
import { queryCollection, type Query } from '../core/query.js';

/**
 * Who listens to what: targets registered by the collection (or collection group, or document)
 * they watch. A commit is matched only against the targets that could contain its documents, so a
 * write costs work in proportion to its listeners, not to the number of queries served.
 */
export interface WatchedTarget {
  dbKey: string;
  /** A query target, or the documents of a documents target. */
  query?: Query;
  documents?: ReadonlySet<string>;
  /** Receives every commit that touches the target's scope, in commit order. */
  deliver(commitTime: number, changes: CommittedChange[]): void;
  /** Counted as a Listen target in the metrics (not the documents a target's rules looked up). */
  counted?: boolean;
}

/** How far back the hub remembers which documents changed, so resumed targets get only deltas. */
export interface HistoryLimits {
  maxChanges: number;
  maxAgeMs: number;
}

interface RememberedCommit {
  dbKey: string;
  commitTime: number;
  paths: string[];
}

export class ListenHub {
  private readonly history: RememberedCommit[] = [];
  private remembered = 0;
  /** Commits at or before this time (µs) may have been forgotten (or happened before this process). */
  private horizon = Date.now() * 1000;
  private readonly byCollection = new Map<string, Set<WatchedTarget>>();
  private readonly byGroup = new Map<string, Set<WatchedTarget>>();
  private readonly byDocument = new Map<string, Set<WatchedTarget>>();
  /** Kindless queries (all documents under a parent) see every commit of their database. */
  private readonly everything = new Map<string, Set<WatchedTarget>>();
  private readonly unsubscribe: () => void;

  constructor(
    database: DocumentDatabase,
    private readonly limits: HistoryLimits = { maxChanges: 100_000, maxAgeMs: 30 * 60_000 },
  ) {
    this.unsubscribe = database.onCommit((event) => {
      this.remember(event);
      this.dispatch(event);
    });
  }

  /**
   * The documents of a database changed after `time`, if every commit since then is still
   * remembered; undefined means the caller must start over (RESET).
   */
  changedSince(dbKey: string, time: number): Set<string> | undefined {
    if (time < this.horizon) return undefined;
    const paths = new Set<string>();
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.commitTime > time; i--) {
      const commit = this.history[i]!;
      if (commit.dbKey === dbKey) for (const path of commit.paths) paths.add(path);
    }
    return paths;
  }

  private remember(event: CommitEvent): void {
    this.history.push({ dbKey: event.dbKey, commitTime: event.commitTime, paths: event.changes.map((change) => change.path) });
    this.remembered += event.changes.length;
    const oldestKept = Date.now() * 1000 - this.limits.maxAgeMs * 1000;
    while (this.history.length && (this.remembered > this.limits.maxChanges || this.history[0]!.commitTime < oldestKept)) {
      const dropped = this.history.shift()!;
      this.remembered -= dropped.paths.length;
      this.horizon = Math.max(this.horizon, dropped.commitTime);
    }
  }

  register(target: WatchedTarget): () => void {
    const keys = this.keysOf(target);
    for (const [index, key] of keys) add(index, key, target);
    const uncount = target.counted === false ? () => undefined : firestoreMetrics.targetAdded();
    return () => {
      for (const [index, key] of keys) remove(index, key, target);
      uncount();
    };
  }

  close(): void {
    this.unsubscribe();
  }

  private keysOf(target: WatchedTarget): Array<[Map<string, Set<WatchedTarget>>, string]> {
    const scoped = (key: string) => scopedKey(target.dbKey, key);
    if (target.documents) return [...target.documents].map((path) => [this.byDocument, scoped(path)]);
    const query = target.query!;
    if (!query.allDescendants) {
      return [[this.byCollection, scoped(queryCollection(query))]];
    }
    if (query.collectionId !== undefined) return [[this.byGroup, scoped(query.collectionId)]];
    return [[this.everything, target.dbKey]];
  }

  private dispatch(event: CommitEvent): void {
    const only = this.singleScope(event);
    if (only !== undefined) {
      // Every change of the commit goes to the same targets (the usual case: one collection): they
      // share the commit's list instead of a list each. Nobody changes a delivered list.
      for (const target of only) target.deliver(event.commitTime, event.changes);
      return;
    }
    const perTarget = new Map<WatchedTarget, CommittedChange[]>();
    const note = (targets: Set<WatchedTarget> | undefined, change: CommittedChange) => {
      for (const target of targets ?? []) {
        const list = perTarget.get(target);
        if (list) list.push(change);
        else perTarget.set(target, [change]);
      }
    };
    const scoped = (key: string) => scopedKey(event.dbKey, key);
    for (const change of event.changes) {
      const { collection, collectionId } = collectionOf(change.path);
      note(this.byCollection.get(scoped(collection)), change);
      note(this.byGroup.get(scoped(collectionId)), change);
      note(this.byDocument.get(scoped(change.path)), change);
      note(this.everything.get(event.dbKey), change);
    }
    for (const [target, changes] of perTarget) target.deliver(event.commitTime, changes);
  }

  /**
   * The targets of a commit whose changes all fall in one collection that no collection-group,
   * documents or kindless target watches (each of those would take only some changes); else undefined.
   */
  private singleScope(event: CommitEvent): ReadonlySet<WatchedTarget> | undefined {
    const scoped = (key: string) => scopedKey(event.dbKey, key);
    if (this.everything.has(event.dbKey)) return undefined;
    let collection: string | undefined;
    for (const change of event.changes) {
      const own = collectionOf(change.path);
      if (collection !== undefined && own.collection !== collection) return undefined;
      collection = own.collection;
      if (this.byDocument.has(scoped(change.path)) || this.byGroup.has(scoped(own.collectionId))) return undefined;
    }
    return collection === undefined ? undefined : (this.byCollection.get(scoped(collection)) ?? noTargets);
  }
}

/** The hub's index keys: a path, collection or collection id within one database. */
function scopedKey(dbKey: string, key: string): string {
  return `${dbKey}\u0000${key}`;
}

/** A document path's collection path and collection id. */
function collectionOf(path: string): { collection: string; collectionId: string } {
  const collection = path.slice(0, path.lastIndexOf('/'));
  return { collection, collectionId: collection.slice(collection.lastIndexOf('/') + 1) };
}

const noTargets: ReadonlySet<WatchedTarget> = new Set();

function add(index: Map<string, Set<WatchedTarget>>, key: string, target: WatchedTarget): void {
  let set = index.get(key);
  if (!set) {
    set = new Set();
    index.set(key, set);
  }
  set.add(target);
}

function remove(index: Map<string, Set<WatchedTarget>>, key: string, target: WatchedTarget): void {
  const set = index.get(key);
  set?.delete(target);
  if (set?.size === 0) index.delete(key);
}
