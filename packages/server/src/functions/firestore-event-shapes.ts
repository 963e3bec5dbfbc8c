/**
 * A stored Firestore event as the function receives it, the way Google sends it:
 * - v2 (onDocumentCreated...): a CloudEvent whose data is a DocumentEventData protobuf (binary
 *   content mode, `datacontenttype: application/protobuf`); firebase-functions decodes the bytes.
 *   DocumentEventData (google-cloudevents firestore/v1/data.proto) is wire-compatible with
 *   google.firestore.v1.Document, so it is encoded with the Firestore protos Hearth already loads.
 * - v1 (functions.firestore.document().onCreate...): `(data, context)` with `{value, oldValue,
 *   updateMask}` in JSON and the legacy event type and resource, as Google's emulator sends them.
 */
import protobuf from 'protobufjs';
import { loadFirestoreRoot, messageFromJson } from '../firestore/api/grpc-codec.js';
import { formatTimestamp } from '../firestore/core/value-wire.js';
import type { FirestoreEventPayload, StoredDocument } from './firestore-triggers.js';

export type WorkerEventBody =
  | { signature: 'cloudevent'; event: Record<string, unknown> }
  | { signature: 'event'; data: unknown; context: Record<string, unknown> };

const dataSchema = 'https://github.com/googleapis/google-cloudevents/blob/main/proto/google/events/cloud/firestore/v1/data.proto';

let types: { document: protobuf.Type; eventData: protobuf.Type } | undefined;

function protoTypes(): { document: protobuf.Type; eventData: protobuf.Type } {
  if (types) return types;
  const root = loadFirestoreRoot();
  const eventData = new protobuf.Type('DocumentEventData')
    .add(new protobuf.Field('value', 1, 'google.firestore.v1.Document'))
    .add(new protobuf.Field('oldValue', 2, 'google.firestore.v1.Document'))
    .add(new protobuf.Field('updateMask', 3, 'google.firestore.v1.DocumentMask'));
  root.define('hearth.functions').add(eventData);
  root.resolveAll();
  types = { document: root.lookupType('google.firestore.v1.Document'), eventData };
  return types;
}

/** µs since the epoch -> RFC 3339 with the microseconds. */
export function timestampOf(micros: number): string {
  return formatTimestamp(Math.floor(micros / 1e6), (micros % 1e6) * 1000);
}

function documentJson(name: string, stored: StoredDocument): Record<string, unknown> {
  return { name, fields: stored.fields, createTime: timestampOf(stored.createTime), updateTime: timestampOf(stored.updateTime) };
}

/** A field name as a field path segment (backquoted unless a plain identifier). */
function fieldPathSegment(name: string): string {
  return /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) ? name : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** The top-level fields an update changed, added or removed (Google's updateMask.fieldPaths). */
export function changedFields(before: StoredDocument | null, after: StoredDocument | null): string[] {
  if (!before || !after) return [];
  const names = new Set([...Object.keys(before.fields), ...Object.keys(after.fields)]);
  return [...names].filter((name) => JSON.stringify(before.fields[name]) !== JSON.stringify(after.fields[name])).sort().map(fieldPathSegment);
}

export function workerEventBody(id: string, payload: FirestoreEventPayload, commitTime: number, location: string): WorkerEventBody {
  const name = `projects/${payload.projectId}/databases/${payload.databaseId}/documents/${payload.path}`;
  const value = payload.after ? documentJson(name, payload.after) : undefined;
  const oldValue = payload.before ? documentJson(name, payload.before) : undefined;
  const fieldPaths = payload.kind === 'updated' ? changedFields(payload.before, payload.after) : [];
  if (payload.eventType.startsWith('providers/')) {
    return {
      signature: 'event',
      data: { value: value ?? {}, oldValue: oldValue ?? {}, ...(fieldPaths.length ? { updateMask: { fieldPaths } } : {}) },
      context: { eventId: id, timestamp: timestampOf(commitTime), eventType: payload.eventType, resource: name, params: payload.params },
    };
  }
  const { document, eventData } = protoTypes();
  const message = {
    ...(value ? { value: messageFromJson(document, value) } : {}),
    ...(oldValue ? { oldValue: messageFromJson(document, oldValue) } : {}),
    ...(fieldPaths.length ? { updateMask: { fieldPaths } } : {}),
  };
  const bytes = Buffer.from(eventData.encode(message).finish());
  const withAuth = payload.eventType.endsWith('.withAuthContext');
  return {
    signature: 'cloudevent',
    event: {
      specversion: '1.0',
      id,
      source: `//firestore.googleapis.com/projects/${payload.projectId}/databases/${payload.databaseId}`,
      type: payload.eventType,
      time: timestampOf(commitTime),
      subject: `documents/${payload.path}`,
      datacontenttype: 'application/protobuf',
      dataschema: dataSchema,
      location,
      project: payload.projectId,
      database: payload.databaseId,
      namespace: '(default)',
      document: payload.path,
      // Hearth does not record who made a commit (yet): Google's value for a caller it cannot name.
      ...(withAuth ? { authtype: 'unknown', authid: '' } : {}),
      data: { base64: bytes.toString('base64') },
    },
  };
}
