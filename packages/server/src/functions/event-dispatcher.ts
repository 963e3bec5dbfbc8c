/**
 * Delivers stored trigger events to the worker, at least once: claims due events under a lease
 * (so one instance at a time holds each), calls the function, and settles the event by its answer.
 * - delivered (2xx): removed;
 * - the function failed (threw, or ran past its timeoutSeconds): with `retry` set it is due again
 *   after a backoff (1 s doubling to 10 min, jittered) until `maxAttempts` tries, then set aside;
 *   without `retry` it is set aside at once (Google drops it; Hearth keeps it for the operator);
 * - the worker was not there (restarting): due again shortly, not counted against the function.
 * A crash between the call and the settle leaves the lease to lapse, and the event is delivered
 * again with the same id: functions must be idempotent, as on Google's servers.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { TriggerEvent, TriggerEventStore } from '../storage/trigger-events.js';
import type { FirestoreEventPayload } from './firestore-triggers.js';
import { workerEventBody } from './firestore-event-shapes.js';
import { storageEventBody, type StorageEventPayload } from './storage-triggers.js';
import { authEventBody, type AuthEventPayload } from './auth-triggers.js';
import type { WorkerEventBody } from './firestore-event-shapes.js';
import type { FunctionEndpoint } from './manifest.js';
import { WorkerUnavailable, type WorkerProcess } from './worker-process.js';

export interface DispatcherOptions {
  /** Tries before an event is set aside (with retry). */
  maxAttempts: number;
  /** The first retry's wait; each later one doubles, up to maxBackoffMs. */
  firstBackoffMs: number;
  maxBackoffMs: number;
  /** Deliveries in flight at once, per instance. */
  concurrency: number;
  /** How often the store is looked at when nothing was raised here (other instances' commits, retries). */
  pollMs: number;
  /** A function's time when its manifest sets none (Google's default for event functions). */
  defaultTimeoutSeconds: number;
  /**
   * The re-trigger loop guard: more events than this for one function and one document within a
   * minute (a trigger writing the document it listens to, again and again) are set aside undelivered.
   */
  loopLimitPerMinute: number;
}

export const defaultDispatcherOptions: DispatcherOptions = {
  maxAttempts: 8,
  firstBackoffMs: 1000,
  maxBackoffMs: 600_000,
  concurrency: 16,
  pollMs: 500,
  defaultTimeoutSeconds: 60,
  loopLimitPerMinute: 100,
};

export interface DeliveryRecord {
  id: string;
  target: string;
  attempt: number;
  /** The commit that raised the event (µs). */
  commitTime: number;
  ok: boolean;
  ms: number;
  error?: string;
  /** What the function printed during this try. */
  logs: string[];
  at: number;
}

/** What the worker is sent for a stored event, by the source that raised it. */
function eventBody(event: TriggerEvent, endpoint: FunctionEndpoint): WorkerEventBody {
  const payload = JSON.parse(event.payload) as FirestoreEventPayload | StorageEventPayload | AuthEventPayload;
  if ('source' in payload && payload.source === 'storage') return storageEventBody(event.id, payload, event.commitTime / 1000);
  if ('source' in payload && payload.source === 'auth') return authEventBody(event.id, payload, event.commitTime / 1000);
  return workerEventBody(event.id, payload as FirestoreEventPayload, event.commitTime, endpoint.region);
}

export class EventDispatcher {
  private readonly owner = randomUUID();
  private readonly byName: Map<string, FunctionEndpoint>;
  private running = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private raised = 0;
  private inFlight = 0;
  private loop: Promise<void> | undefined;
  /** The last deliveries (newest last), for the console and tests. */
  readonly deliveries: DeliveryRecord[] = [];
  private readonly settledListeners = new Set<(record: DeliveryRecord) => void>();
  /** Per function and document: the times (ms) of its events' first deliveries in the last minute. */
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly store: TriggerEventStore,
    private readonly worker: WorkerProcess,
    endpoints: readonly FunctionEndpoint[],
    private readonly logger: Logger,
    private readonly options: DispatcherOptions = defaultDispatcherOptions,
    private readonly clock: () => number = Date.now,
  ) {
    this.byName = new Map(endpoints.map((endpoint) => [endpoint.name, endpoint]));
  }

  /** Something was raised by a commit of this process: look soon rather than at the next poll. */
  noteRaised(): void {
    this.raised++;
    if (this.running && !this.loop) this.schedule(5);
  }

  onSettled(listener: (record: DeliveryRecord) => void): () => void {
    this.settledListeners.add(listener);
    return () => this.settledListeners.delete(listener);
  }

  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.running || this.loop) return;
      this.loop = this.round().finally(() => {
        this.loop = undefined;
      });
    }, ms);
  }

  /** Claims and delivers until nothing is due, then waits for the next poll (or a raise). */
  private async round(): Promise<void> {
    try {
      for (;;) {
        if (!this.running) return;
        const room = this.options.concurrency - this.inFlight;
        if (room <= 0) {
          await new Promise((wake) => setTimeout(wake, 5));
          continue;
        }
        this.raised = 0;
        const leaseMs = this.maxTimeoutMs() + 30_000;
        const claimed = await this.store.claim(this.owner, this.clock(), leaseMs, room);
        for (const event of claimed) {
          this.inFlight++;
          void this.deliver(event).finally(() => {
            this.inFlight--;
          });
        }
        if (claimed.length === 0 && this.raised === 0) break;
        if (claimed.length === 0) await new Promise((wake) => setTimeout(wake, 5));
      }
    } catch (error) {
      if (this.running) this.logger.error({ err: error }, 'claiming trigger events failed; trying again at the next poll');
    }
    if (this.running) this.schedule(this.options.pollMs);
  }

  private maxTimeoutMs(): number {
    let max = this.options.defaultTimeoutSeconds;
    for (const endpoint of this.byName.values()) max = Math.max(max, endpoint.timeoutSeconds ?? 0);
    return max * 1000;
  }

  private async deliver(event: TriggerEvent): Promise<void> {
    const endpoint = this.byName.get(event.target);
    const started = this.clock();
    const attempt = event.attempts + 1;
    let failure: { error: string; counts: boolean; setAside?: boolean } | undefined;
    let logs: string[] = [];
    if (!endpoint) {
      failure = { error: `the code base no longer exports ${event.target}`, counts: true };
    } else if (event.attempts === 0 && this.loops(event, started)) {
      failure = { error: `re-trigger loop suspected: more than ${this.options.loopLimitPerMinute} events for ${event.target} on ${event.path} in a minute; set aside undelivered`, counts: true, setAside: true };
    } else {
      try {
        const body = eventBody(event, endpoint);
        const answer = await this.worker.request(`/__hearth/events/${encodeURIComponent(event.target)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          timeoutMs: (endpoint.timeoutSeconds ?? this.options.defaultTimeoutSeconds) * 1000,
          invocationId: `${event.id}/${attempt}`,
        });
        logs = answer.logs;
        if (answer.status < 200 || answer.status >= 300) {
          failure = { error: `status ${answer.status}: ${answer.body.toString('utf8').slice(0, 1000)}`, counts: true };
        }
      } catch (error) {
        const down = error instanceof WorkerUnavailable && error.reason === 'down';
        failure = { error: (error as Error).message, counts: !down };
      }
    }
    const record: DeliveryRecord = { id: event.id, target: event.target, attempt, commitTime: event.commitTime, ok: !failure, ms: this.clock() - started, at: this.clock(), logs, ...(failure ? { error: failure.error } : {}) };
    this.deliveries.push(record);
    if (this.deliveries.length > 1000) this.deliveries.shift();
    try {
      if (!failure) await this.store.succeed(event.id, this.owner);
      else await this.store.fail(event.id, this.owner, this.nextTry(event, endpoint, failure));
    } catch (error) {
      // The lease lapses and the event is delivered again: at least once.
      this.logger.error({ err: error, event: event.id }, 'settling a trigger event failed');
    }
    if (failure?.counts) this.logger.warn({ function: event.target, event: event.id, attempt, error: failure.error }, 'a function failed its event');
    for (const listener of this.settledListeners) listener(record);
  }

  /** Counts a first delivery; true when its function and document are over the loop guard's limit. */
  private loops(event: TriggerEvent, now: number): boolean {
    const key = `${event.target}\u0000${event.db}\u0000${event.path}`;
    const times = (this.recent.get(key) ?? []).filter((time) => now - time < 60_000);
    times.push(now);
    this.recent.set(key, times);
    if (this.recent.size > 10_000) {
      for (const [other, list] of this.recent) if (now - list[list.length - 1]! >= 60_000) this.recent.delete(other);
    }
    return times.length > this.options.loopLimitPerMinute;
  }

  private nextTry(event: TriggerEvent, endpoint: FunctionEndpoint | undefined, failure: { error: string; counts: boolean; setAside?: boolean }): { nextAt: number; error: string; setAside: boolean } {
    const now = this.clock();
    if (failure.setAside) return { nextAt: now, error: failure.error, setAside: true };
    if (!failure.counts) {
      // Not the function's failure: the same try again soon (the stored count goes up; a retry bound of its own below).
      return { nextAt: now + 1000, error: failure.error, setAside: event.attempts + 1 >= this.options.maxAttempts * 4 };
    }
    if (!endpoint?.retry || event.attempts + 1 >= this.options.maxAttempts) return { nextAt: now, error: failure.error, setAside: true };
    const backoff = Math.min(this.options.firstBackoffMs * 2 ** event.attempts, this.options.maxBackoffMs);
    return { nextAt: now + Math.round(backoff * (0.75 + Math.random() * 0.5)), error: failure.error, setAside: false };
  }
}
