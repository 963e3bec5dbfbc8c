import type { PgQueryable } from './pg-rows.js';
import { firstSegment, parentRange } from '../parent-range.js';
import { bytes } from './pg-document-scan.js';

/**
 * The ids one level below a prefix (the collections under a document, or at the root), as on SQLite
 * (sqlite-collection-ids.ts): the (db, parent, doc_id) index is walked from one id to the next,
 * here in one recursive query (a seek per id, not a round trip per id), where `SELECT DISTINCT
 * parent` read the parent of every document below. From a parent `<prefix>/<id>` the next is the
 * first after it (`|| '\x00'`: past every row of that parent); from `<prefix>/<id>/...`, the first
 * from `<prefix>/<id>0` on ('0' is the byte after '/').
 */
const walk = `
  WITH RECURSIVE walk(parent) AS (
    (SELECT parent FROM fs_documents WHERE db = $1 AND parent >= $2 AND parent < $3 ORDER BY parent LIMIT 1)
    UNION ALL
    SELECT (SELECT d.parent FROM fs_documents d WHERE d.db = $1 AND d.parent >= next.bound AND d.parent < $3 ORDER BY d.parent LIMIT 1)
    FROM walk w
    CROSS JOIN LATERAL (SELECT position('\\x2f'::bytea IN substring(w.parent FROM $4 + 1)) AS slash) cut
    CROSS JOIN LATERAL (
      SELECT CASE WHEN cut.slash = 0 THEN w.parent || '\\x00'::bytea ELSE substring(w.parent FROM 1 FOR $4 + cut.slash - 1) || '\\x30'::bytea END AS bound
    ) next
    WHERE w.parent IS NOT NULL
  )
  SELECT parent FROM walk WHERE parent IS NOT NULL`;

/** Unordered, each once. */
export async function pgCollectionIds(reader: PgQueryable, db: string, prefix: string): Promise<string[]> {
  const range = parentRange(prefix);
  const lower = bytes(range.lower);
  const { rows } = await reader.query<{ parent: Buffer }>(walk, [db, lower, bytes(range.upper), lower.length]);
  return [...new Set(rows.map(({ parent }) => firstSegment(parent.subarray(lower.length).toString('utf8'))))];
}
