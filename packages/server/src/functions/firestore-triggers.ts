/**
 * Firestore triggers: which committed changes a function is owed (the selector the document store
 * runs inside every commit), and the stored event's payload. Document patterns as
 * firebase-functions writes them: literal segments, `{name}` for one segment, `{name=**}` for the
 * rest of the path (one segment or more).
 */
import { randomUUID } from 'node:crypto';
import type { DocumentRow } from '../storage/document-store.js';
import type { NewTriggerEvent, TriggerEventSelector } from '../storage/trigger-events.js';
import { firestoreEventTypes, type FunctionEndpoint } from './manifest.js';

export type DocumentChangeKind = 'created' | 'updated' | 'deleted';

/** A path -> its wildcards' values, or undefined when the pattern does not match it. */
export type PathMatcher = (path: string) => Record<string, string> | undefined;

export function compileDocumentPattern(pattern: string): PathMatcher {
  const parts = pattern.replace(/^\/+|\/+$/g, '').split('/');
  return (path) => {
    const segments = path.split('/');
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const wildcard = /^\{([^}=]+)(=\*\*)?\}$/.exec(part);
      if (wildcard?.[2]) {
        // The rest of the path: only last in a pattern, and never empty.
        if (i !== parts.length - 1 || segments.length <= i) return undefined;
        params[wildcard[1]!] = segments.slice(i).join('/');
        return params;
      }
      const segment = segments[i];
      if (segment === undefined) return undefined;
      if (wildcard) params[wildcard[1]!] = segment;
      else if (part !== segment) return undefined;
    }
    return segments.length === parts.length ? params : undefined;
  };
}

/** What the stored event holds: the document before and after, as the commit left them. */
export interface FirestoreEventPayload {
  kind: DocumentChangeKind;
  /** The function's event type (v2 CloudEvent type or v1 legacy type). */
  eventType: string;
  projectId: string;
  databaseId: string;
  path: string;
  params: Record<string, string>;
  before: StoredDocument | null;
  after: StoredDocument | null;
}

export interface StoredDocument {
  /** proto3 JSON of the fields, as stored. */
  fields: Record<string, unknown>;
  /** µs */
  createTime: number;
  updateTime: number;
}

function changeKind(before: DocumentRow | undefined, after: DocumentRow | undefined): DocumentChangeKind | undefined {
  if (!before && after) return 'created';
  if (before && !after) return 'deleted';
  if (before && after && before.updateTime !== after.updateTime) return 'updated';
  return undefined;
}

/** The row's stored fields spliced into the payload's JSON as they are (no parse in the commit). */
function storedJson(row: DocumentRow | undefined): string {
  if (!row) return 'null';
  return `{"fields":${row.fields},"createTime":${row.createTime},"updateTime":${row.updateTime}}`;
}

interface CompiledTrigger {
  name: string;
  eventType: string;
  wants: 'created' | 'updated' | 'deleted' | 'written';
  databaseId: string;
  match: PathMatcher;
}

/**
 * The selector for the code base's Firestore triggers in `projectId` (the project the code base is
 * deployed to). Each matching change raises one event per function, with a fresh random id that
 * is stored, so every redelivery carries the same id.
 */
export function firestoreTriggerSelector(projectId: string, endpoints: readonly FunctionEndpoint[]): TriggerEventSelector | undefined {
  const triggers: CompiledTrigger[] = [];
  for (const endpoint of endpoints) {
    if (endpoint.kind.type !== 'firestore') continue;
    triggers.push({
      name: endpoint.name,
      eventType: endpoint.kind.eventType,
      wants: firestoreEventTypes[endpoint.kind.eventType]!,
      databaseId: endpoint.kind.database,
      match: compileDocumentPattern(endpoint.kind.document),
    });
  }
  if (!triggers.length) return undefined;
  const prefix = `${projectId}/`;
  return (db, change) => {
    if (!db.startsWith(prefix)) return [];
    const kind = changeKind(change.before, change.after);
    if (!kind) return [];
    const databaseId = db.slice(prefix.length);
    const events: NewTriggerEvent[] = [];
    for (const trigger of triggers) {
      if (trigger.databaseId !== databaseId || (trigger.wants !== 'written' && trigger.wants !== kind)) continue;
      const params = trigger.match(change.path);
      if (!params) continue;
      const head = JSON.stringify({ kind, eventType: trigger.eventType, projectId, databaseId, path: change.path, params });
      events.push({
        id: randomUUID(),
        target: trigger.name,
        payload: `${head.slice(0, -1)},"before":${storedJson(change.before)},"after":${storedJson(change.after)}}`,
      });
    }
    return events;
  };
}
