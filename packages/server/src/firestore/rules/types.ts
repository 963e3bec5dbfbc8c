import type { Doc } from '../core/documents.js';
import type { DatabaseId } from '../core/paths.js';
import type { Query } from '../core/query.js';

/**
 * The boundary between the rules language (parser, evaluator, standard library) and the document
 * database that enforces it. The database builds one RulesRequest per access it must judge and
 * asks `evaluateRules`; nothing else of the language leaks out.
 */

/** The five methods rules grant (`read` = get + list, `write` = create + update + delete). */
export type RulesMethod = 'get' | 'list' | 'create' | 'update' | 'delete';

/** `request.auth`: the verified ID token's uid and its whole payload as `token`. */
export interface RulesAuth {
  uid: string;
  /** The ID token's claims as decoded JSON (email, email_verified, firebase.sign_in_provider, custom claims, ...). */
  token: Readonly<Record<string, unknown>>;
}

/**
 * What rules may read besides the request: `get()`/`exists()` see the database as it is,
 * `getAfter()`/`existsAfter()` as it would be after the request's writes. Paths are relative to
 * the database's `documents` (`users/u1`).
 */
export interface RulesDocumentReader {
  get(path: string): Promise<Doc | undefined>;
  getAfter(path: string): Promise<Doc | undefined>;
}

/**
 * Google's per-request limit on document lookups (get, exists, getAfter, existsAfter): 10 for a
 * single-document request or a query, 20 for a batch or transaction. The same budget object is
 * shared by every evaluation of one request; repeated lookups of one path count once.
 */
export interface RulesLookupBudget {
  limit: number;
  /** Paths looked up so far in this request. */
  seen: Set<string>;
}

export interface RulesRequest {
  db: DatabaseId;
  method: RulesMethod;
  /**
   * get/create/update/delete: the document's path relative to `documents` (`users/u1`).
   * list: ignored; the query says where (collection, or collection group under a parent).
   */
  path: string;
  /** list only: the query being judged ("rules are not filters": its constraints, never its results). */
  query?: Query;
  /**
   * list only: the query names one document (`__name__ ==`, or `in` with one name), and is judged
   * on that document as Google's engine does: `path` is its path and `resource` what is stored.
   */
  namedDocument?: boolean;
  auth: RulesAuth | null;
  /** `request.time`, microseconds since the epoch. */
  time: number;
  /** `resource`: the stored document (get, update, delete); undefined when absent (create, or a get of a missing document). */
  resource?: Doc;
  /** `request.resource`: create/update only, the document as the whole batch leaves it. */
  requestResource?: Doc;
  reader: RulesDocumentReader;
  budget: RulesLookupBudget;
}

/** The allow statement that granted an access: where it is and what it says. */
export interface RulesDecidingAllow {
  /** 1-based line and column of the `allow` keyword. */
  line: number;
  column: number;
  /** The full pattern of its match block: `/databases/{database}/documents/notes/{id}`. */
  match: string;
  /** The condition as written; absent for an unconditional allow. */
  condition?: string;
}

export interface RulesDecision {
  allowed: boolean;
  /** When allowed: the statement that did (for a list judged over several scenarios, the last one's). Made at compile time, so free. */
  decidedBy?: RulesDecidingAllow;
  /**
   * For the operator's log, never for the caller: which match and condition allowed, or why none
   * did (no matching allow, each condition false, or the error an expression raised), with lines.
   */
  reason: string;
}
