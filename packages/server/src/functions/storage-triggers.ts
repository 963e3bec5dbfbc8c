/**
 * Cloud Storage triggers (v2 onObjectFinalized / Deleted / MetadataUpdated, v1
 * storage.object().onFinalize / onDelete / onMetadataUpdate). The files domain records each object
 * event in the same commit as the object change (files_events); this bridge reads that log after
 * its stored cursor and raises a trigger event per matching function, with an id derived from the
 * object event's (so reading the log again raises nothing twice), then moves the cursor on. A
 * crash between the two raises the events again under the same ids: at least once, never lost.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { defaultBucketsOf } from '../files/files-setup.js';
import { toJsonObject } from '../files/core/object-metadata.js';
import type { FilesStore, ObjectEvent, ObjectEventKind } from '../storage/files-store.js';
import type { TriggerEventStore } from '../storage/trigger-events.js';
import type { WorkerEventBody } from './firestore-event-shapes.js';
import type { FunctionEndpoint } from './manifest.js';

const cursorName = 'files_events';

const kindsOf: Record<string, ObjectEventKind> = {
  'google.cloud.storage.object.v1.finalized': 'finalize',
  'google.cloud.storage.object.v1.deleted': 'delete',
  'google.cloud.storage.object.v1.metadataUpdated': 'metadataUpdate',
  'google.storage.object.finalize': 'finalize',
  'google.storage.object.delete': 'delete',
  'google.storage.object.metadataUpdate': 'metadataUpdate',
};

export interface StorageEventPayload {
  source: 'storage';
  eventType: string;
  bucket: string;
  name: string;
  /** The object as the JSON API shows it, when the event happened. */
  object: Record<string, unknown>;
}

/** A UUID-shaped id fixed by the object event and the function. */
function stableId(objectEventId: string, target: string): string {
  const hex = createHash('sha256').update(`storage/${objectEventId}/${target}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function storageEventBody(id: string, payload: StorageEventPayload, at: number): WorkerEventBody {
  const time = new Date(at).toISOString();
  if (!payload.eventType.startsWith('google.cloud.')) {
    return {
      signature: 'event',
      data: payload.object,
      context: { eventId: id, timestamp: time, eventType: payload.eventType, resource: { service: 'storage.googleapis.com', name: `projects/_/buckets/${payload.bucket}/objects/${payload.name}`, type: 'storage#object' }, params: {} },
    };
  }
  return {
    signature: 'cloudevent',
    event: {
      specversion: '1.0',
      id,
      source: `//storage.googleapis.com/projects/_/buckets/${payload.bucket}`,
      type: payload.eventType,
      time,
      subject: `objects/${payload.name}`,
      datacontenttype: 'application/json',
      bucket: payload.bucket,
      data: payload.object,
    },
  };
}

export class StorageEventBridge {
  private readonly triggers: Array<{ name: string; eventType: string; kind: ObjectEventKind; bucket: string }> = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private pumping: Promise<void> | undefined;

  constructor(
    private readonly files: FilesStore,
    private readonly events: TriggerEventStore,
    endpoints: readonly FunctionEndpoint[],
    projectId: string,
    private readonly baseUrl: () => string,
    private readonly raised: () => void,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {
    for (const endpoint of endpoints) {
      if (endpoint.kind.type !== 'storage') continue;
      const kind = kindsOf[endpoint.kind.eventType];
      if (kind) this.triggers.push({ name: endpoint.name, eventType: endpoint.kind.eventType, kind, bucket: endpoint.kind.bucket ?? defaultBucketsOf(projectId)[0]! });
    }
  }

  get size(): number {
    return this.triggers.length;
  }

  /**
   * On the first start with storage triggers, the log's past is not the functions' business (Google
   * delivers nothing from before a function existed): the cursor starts at the log's end.
   */
  async prepare(): Promise<void> {
    if (!this.triggers.length || (await this.events.cursor(cursorName)) !== undefined) return;
    let after: string | undefined;
    for (;;) {
      const page = await this.files.events(after, 1000);
      if (!page.length) break;
      after = page[page.length - 1]!.id;
    }
    await this.events.setCursor(cursorName, after ?? '0');
  }

  start(): void {
    if (!this.triggers.length || this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.pumping;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.pumping = this.pump()
        .catch((error: unknown) => this.logger.error({ err: error }, 'reading Cloud Storage events for functions failed; trying again'))
        .finally(() => {
          this.pumping = undefined;
          if (this.running) this.schedule(this.pollMs);
        });
    }, ms);
  }

  private async pump(): Promise<void> {
    let after = await this.events.cursor(cursorName);
    for (;;) {
      if (!this.running) return;
      const page: ObjectEvent[] = await this.files.events(after, 200);
      if (!page.length) return;
      const raised = page.flatMap((event) => this.triggers
        .filter((trigger) => trigger.kind === event.kind && trigger.bucket === event.object.bucket)
        .map((trigger) => {
          const payload: StorageEventPayload = { source: 'storage', eventType: trigger.eventType, bucket: event.object.bucket, name: event.object.name, object: toJsonObject(event.object, this.baseUrl()) };
          return { id: stableId(event.id, trigger.name), target: trigger.name, db: `storage/${event.object.bucket}`, path: event.object.name, commitTime: event.at * 1000, payload: JSON.stringify(payload) };
        }));
      await this.events.insert(raised, Date.now());
      after = page[page.length - 1]!.id;
      await this.events.setCursor(cursorName, after);
      if (raised.length) this.raised();
    }
  }
}
