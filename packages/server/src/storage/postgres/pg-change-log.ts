import type { DocumentRow } from '../document-store.js';
import type { StoredChange } from '../change-feed.js';
import { nameKey } from '../name-keys.js';

/**
 * A commit's changes as the fs_changes table keeps them: JSON text, each document by path with
 * its versions before and after (times and fields; the rest of a row follows from the path).
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

export const changeChannel = 'hearth_changes';

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

/** The NOTIFY payload: which database, up to which sequence. */
export function notifyPayload(db: string, seq: number): string {
  return `${seq} ${db}`;
}

export function parseNotifyPayload(payload: string | undefined): { db: string; seq: number } | undefined {
  const space = payload?.indexOf(' ') ?? -1;
  if (!payload || space < 1) return undefined;
  const seq = Number(payload.slice(0, space));
  return Number.isSafeInteger(seq) ? { db: payload.slice(space + 1), seq } : undefined;
}
