/**
 * What a listener of the differential test of Firestore listeners (tests/firestore/differential-listen.test.ts)
 * shows, in the canonical forms that are compared between the two servers and with a fresh read on the same server.
 */
import { DocumentReference, GeoPoint, Timestamp, type DocumentSnapshot, type QuerySnapshot } from 'firebase-admin/firestore';

export interface Seen {
  /** Ordered `path {data}`: what must be equal on both servers (REQUEST_TIME values masked). */
  documents: string[];
  /** `type path oldIndex->newIndex`; empty for document listeners. */
  changes: string[];
  /** The documents with updateTime and exact data, sorted: what a fresh read on the same server must give. */
  syncKey: string;
}

const requestTimeWindowMs = 10 * 60_000;

function canonical(value: unknown, maskRequestTimes: boolean): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return canonicalDouble(value);
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return String(value);
  }
  if (value instanceof Timestamp) return canonicalTimestamp(value, maskRequestTimes);
  if (value instanceof GeoPoint) return `geo(${canonicalDouble(value.latitude)}, ${canonicalDouble(value.longitude)})`;
  if (value instanceof DocumentReference) return `ref(${value.path})`;
  if (value instanceof Uint8Array) return `b'${Buffer.from(value).toString('hex')}'`;
  if (Array.isArray(value)) return `[${value.map((element) => canonical(element, maskRequestTimes)).join(', ')}]`;
  if (typeof value === 'object') return canonicalMap(value as Record<string, unknown>, maskRequestTimes);
  return `<unexpected ${typeof value}>`;
}

function canonicalMap(fields: Record<string, unknown>, maskRequestTimes: boolean): string {
  return `{${Object.keys(fields)
    .sort()
    .map((key) => `${key}: ${canonical(fields[key], maskRequestTimes)}`)
    .join(', ')}}`;
}

/** With useBigInt every integer is a bigint, so a number is a double: integral ones print with ".0". */
function canonicalDouble(number: number): string {
  if (!Number.isFinite(number)) return String(number);
  // As in the REST differential: emulator 1.19.9 stores an input of -0 as 0.0, so the two count as equal.
  const text = String(Object.is(number, -0) ? 0 : number);
  return Number.isInteger(number) && !text.includes('e') ? `${text}.0` : text;
}

function canonicalTimestamp(timestamp: Timestamp, maskRequestTimes: boolean): string {
  if (maskRequestTimes && Math.abs(timestamp.toMillis() - Date.now()) < requestTimeWindowMs) {
    // REQUEST_TIME differs between the servers by nature; it is stored with millisecond precision.
    return timestamp.nanoseconds % 1_000_000 === 0 ? '<request time>' : `<request time with sub-millisecond digits>`;
  }
  return exactTime(timestamp);
}

function exactTime(timestamp: Timestamp): string {
  return `${new Date(timestamp.seconds * 1000).toISOString().slice(0, 19)}.${String(timestamp.nanoseconds).padStart(9, '0')}Z`;
}

function documentEntry(snapshot: DocumentSnapshot, maskRequestTimes: boolean): string {
  return `${snapshot.ref.path} ${canonicalMap(snapshot.data() ?? {}, maskRequestTimes)}`;
}

function syncEntry(snapshot: DocumentSnapshot): string {
  return `${snapshot.ref.path} @${snapshot.updateTime ? exactTime(snapshot.updateTime) : '<no updateTime>'} ${canonicalMap(snapshot.data() ?? {}, false)}`;
}

export function seenInQuery(snapshot: QuerySnapshot): Seen {
  return {
    documents: snapshot.docs.map((doc) => documentEntry(doc, true)),
    changes: snapshot.docChanges().map((change) => `${change.type} ${change.doc.ref.path} ${change.oldIndex}->${change.newIndex}`),
    syncKey: querySyncKey(snapshot),
  };
}

export function querySyncKey(snapshot: QuerySnapshot): string {
  return snapshot.docs.map(syncEntry).sort().join('\n');
}

export function seenInDocument(snapshot: DocumentSnapshot): Seen {
  return { documents: snapshot.exists ? [documentEntry(snapshot, true)] : [], changes: [], syncKey: documentSyncKey(snapshot) };
}

export function documentSyncKey(snapshot: DocumentSnapshot): string {
  return snapshot.exists ? syncEntry(snapshot) : `${snapshot.ref.path} missing`;
}
