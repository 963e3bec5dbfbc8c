/**
 * The "other client" of the browser end-to-end tests of Cloud Firestore's realtime path
 * (tests/e2e-firestore-realtime-*.test.ts), which changes data under the browser's listeners and reads what the
 * server has: raw REST `documents:commit` and GET with `Bearer owner` (the admin; rules do not apply), against the
 * harness's target.
 */
import assert from 'node:assert/strict';
import { activeTarget } from './firestore-realtime-harness.js';
import type { Json, WriteData } from './firestore-realtime-page.js';
import { within } from './firestore-target.js';

function documentName(path: string): string {
  return `projects/${activeTarget().projectId}/databases/(default)/documents/${path}`;
}

function encode(value: Json): Record<string, unknown> {
  if (value === null) return { nullValue: null };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { integerValue: String(value) } : { doubleValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(encode) } };
  return { mapValue: { fields: encodeFields(value) } };
}

function encodeFields(data: WriteData): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, encode(value)]));
}

function decode(value: Record<string, any>): Json {
  if ('nullValue' in value) return null;
  if ('booleanValue' in value) return value.booleanValue;
  if ('integerValue' in value) return Number(value.integerValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('stringValue' in value) return value.stringValue;
  if ('timestampValue' in value) return { timestampValue: value.timestampValue };
  if ('arrayValue' in value) return ((value.arrayValue.values ?? []) as Record<string, any>[]).map(decode);
  if ('mapValue' in value) return decodeFields(value.mapValue.fields ?? {});
  throw new Error(`cannot decode ${JSON.stringify(value)}`);
}

function decodeFields(fields: Record<string, Record<string, any>>): WriteData {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, decode(value)]));
}

export type RestWrite =
  /** Replaces (or creates) the document. */
  | { set: string; data: WriteData }
  /** Changes the listed top-level fields of an existing document. */
  | { update: string; data: WriteData }
  | { delete: string };

async function restCall(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const send = () =>
    fetch(`${activeTarget().url}/v1/${path}`, {
      method,
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  // After a server restart, fetch may first pick a kept-alive connection to the old server, which is closed.
  const response = await within(
    send().catch((error: { cause?: { code?: string } }) => {
      if (error.cause?.code === 'UND_ERR_SOCKET') return send();
      throw error;
    }),
    `${method} /v1/${path}`,
  );
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** One atomic commit from the other client. */
export async function commit(...writes: RestWrite[]): Promise<void> {
  const wire = writes.map((write) => {
    if ('set' in write) return { update: { name: documentName(write.set), fields: encodeFields(write.data) } };
    if ('update' in write) {
      return {
        update: { name: documentName(write.update), fields: encodeFields(write.data) },
        updateMask: { fieldPaths: Object.keys(write.data) },
        currentDocument: { exists: true },
      };
    }
    return { delete: documentName(write.delete) };
  });
  const answer = await restCall('POST', `projects/${activeTarget().projectId}/databases/(default)/documents:commit`, { writes: wire });
  assert.equal(answer.status, 200, `REST commit failed: ${JSON.stringify(answer.body)}`);
}

/** The document as the server has it, or undefined when it does not exist. */
export async function serverData(path: string): Promise<WriteData | undefined> {
  const answer = await restCall('GET', `${documentName(path)}`);
  if (answer.status === 404) return undefined;
  assert.equal(answer.status, 200, `REST get ${path}: ${JSON.stringify(answer.body)}`);
  return decodeFields(answer.body.fields ?? {});
}
