import type { DocumentDatabase } from '../core/database.js';
import type { Doc } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { documentKeyFromName, relativeName, type DatabaseId } from '../core/paths.js';
import type { Query } from '../core/query.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';
import { namedDocument } from '../security/guard.js';
import type { GatedTarget, ListenGate, TargetGrant } from './listen-gate.js';

/** What the client holds for a target, and how the target was allowed (listen-gate.ts). */
export interface ActiveTarget extends GatedTarget {
  grant: TargetGrant;
  query?: Query;
  queryKey?: string;
  documents?: Set<string>;
  /** `named` targets: the document the query names. */
  namedPath?: string;
  /** Limits and offsets depend on documents outside the result: such targets re-run on change. */
  rerun: boolean;
  /** A document its rules looked up changed since it was judged: judged again before anything more is sent. */
  stale?: boolean;
  /** How many of `lookups` the hub watches for it, and the end of that watch. */
  watchedLookups?: number;
  unwatchLookups?: () => void;
  unregister: () => void;
}

/**
 * Reads an addTarget's query or documents into the target, with Google's refusals, and says how it
 * is to be allowed: a query on its constraints, a query naming one document on that document, or
 * documents one by one.
 */
export function defineTarget(database: DocumentDatabase, db: DatabaseId, target: ActiveTarget, spec: Record<string, unknown>): void {
  if (spec.query !== undefined && spec.documents === undefined) {
    const query = wireObject(spec.query, 'addTarget.query');
    onlyKeys(query, ['parent', 'structuredQuery'], 'addTarget.query');
    const parent = relativeName(db, String(query.parent ?? ''), 'Parent');
    target.query = database.parseQuery(db, parent, query.structuredQuery);
    target.queryKey = JSON.stringify([database.dbKey(db), parent, query.structuredQuery ?? null]);
    if (target.query.findNearest) throw firestoreErrors.invalidArgument('FindNearest is not supported for real-time queries.');
    if (target.query.select) throw firestoreErrors.invalidArgument("'select' clauses are not supported for real-time queries.");
    const named = namedDocument(db, target.query);
    if (named !== undefined) {
      // Judged on its one document, as the rules judge such a query: its result is that document when it matches.
      target.grant = 'named';
      target.namedPath = named;
    } else {
      target.rerun = target.query.limit !== undefined || target.query.offset > 0;
    }
    return;
  }
  if (spec.documents !== undefined && spec.query === undefined) {
    const documents = wireObject(spec.documents, 'addTarget.documents');
    onlyKeys(documents, ['documents'], 'addTarget.documents');
    if (!Array.isArray(documents.documents)) throw firestoreErrors.invalidArgument('A documents target needs a list of document names.');
    target.grant = 'documents';
    target.documents = new Set(documents.documents.map((name, i) => documentKeyFromName(db, name, `documents[${i}]`).path));
    return;
  }
  throw firestoreErrors.invalidArgument('A target must be either a query or documents.');
}

/** Whether an existing version is in the target (a named target's result is its document when it matches). */
export function inTarget(gate: ListenGate, target: ActiveTarget, doc: Doc): boolean {
  if (target.documents) return true;
  if (target.grant === 'named') return gate.matches(target, doc) && target.query!.offset === 0 && target.query!.limit !== 0;
  return gate.matches(target, doc);
}
