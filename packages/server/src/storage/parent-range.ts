/**
 * Every document row keeps its parent (its collection's path), so the collections at or under a
 * prefix are the parents from `prefix/` up to `prefix0` ('0' is the character after '/'); at the
 * root, every parent. Text in SQLite and UTF-8 bytes in PostgreSQL sort the same way.
 */
export function parentRange(prefix: string): { lower: string; upper: string } {
  return prefix === '' ? { lower: '', upper: '\u{10FFFF}' } : { lower: `${prefix}/`, upper: `${prefix}0` };
}

/** The id one level below a range's prefix that a parent belongs to: the first segment of what follows `lower`. */
export function firstSegment(rest: string): string {
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash);
}
