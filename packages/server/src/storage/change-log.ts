import type { DocumentRow } from './document-store.js';
import type { StoredChange } from './change-feed.js';
import { nameKey } from './name-keys.js';

/**
 * A commit's changes as the fs_changes table keeps them (PostgreSQL, and SQLite under --workers):
 * JSON text, each document by path with its versions before and after (times and fields; the rest
 * of a row follows from the path).
 */

interface LoggedVersion {
  c: number;
  u: number;
  f: string;
}

interface LoggedChange {
  p: string;
  b: LoggedVersion | null;
  a: LoggedVersion | null;
}

export function changeLogText(changes: readonly StoredChange[]): string {
  const logged: LoggedChange[] = changes.map((change) => ({ p: change.path, b: loggedVersion(change.before), a: loggedVersion(change.after) }));
  return JSON.stringify(logged);
}

export function changesFromLog(text: string): StoredChange[] {
  return (JSON.parse(text) as LoggedChange[]).map((change) => ({ path: change.p, before: rowOf(change.p, change.b), after: rowOf(change.p, change.a) }));
}

function loggedVersion(row: DocumentRow | undefined): LoggedVersion | null {
  return row ? { c: row.createTime, u: row.updateTime, f: row.fields } : null;
}

function rowOf(path: string, version: LoggedVersion | null): DocumentRow | undefined {
  if (!version) return undefined;
  const slash = path.lastIndexOf('/');
  const parent = path.slice(0, Math.max(slash, 0));
  return {
    path,
    parent,
    collectionId: parent.slice(parent.lastIndexOf('/') + 1),
    id: path.slice(slash + 1),
    nameKey: nameKey(path),
    createTime: version.c,
    updateTime: version.u,
    fields: version.f,
  };
}
