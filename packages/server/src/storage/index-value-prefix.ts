/**
 * How much of an index value counts, on every backend. Firestore considers only a value's first
 * 1,500 bytes in queries: values that share them tie and come in document order (Google's
 * emulator: strings sharing their first 1,499 bytes sort by id, ascending or descending with the
 * order). Hearth keeps the first 1,000 bytes of the encoded value (type tag and escapes included),
 * because a PostgreSQL B-tree entry must fit a third of a page with the collection, field and id
 * beside it; SQLite keeps the same, so both backends answer alike. Entries are cut where they are
 * made (firestore/core), so an update compares cut values; scans widen a longer bound to its
 * prefix, and the planner checks filters on the documents again, so equality stays exact.
 */
export const maxIndexValueBytes = 1000;

export function indexValueKey(value: Buffer): Buffer {
  return value.length > maxIndexValueBytes ? value.subarray(0, maxIndexValueBytes) : value;
}
