import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailDeliveryStatus, Mutation, OutboxMessage, Store } from '../../storage/store.js';
import { MailDeliveryLoop, type RetryPolicy } from './delivery-loop.js';

export type OutgoingMail = Omit<OutboxMessage, 'id' | 'createdAt' | 'delivery'> & { from: string };

export interface MailDeliveryOptions {
  /** `smtp://user:pass@host:port` (or `smtps://`); undefined: no SMTP. */
  smtpUrl?: string;
  /** Keep every message in the outbox too (always on in --dev, and whenever there is no SMTP). */
  keepInOutbox: boolean;
  retry?: Partial<RetryPolicy>;
}

const defaultRetry: RetryPolicy = { firstDelayMs: 2000, maxDelayMs: 5 * 60_000 };
const sendingConcurrency = 4;

/**
 * Delivers action mails. A mail is first a row in the store's outbox, written in the same commit as
 * the code its link carries, so whatever was acknowledged is on disk. Without SMTP that row is the
 * delivery (developers and tests read links there). With SMTP the row is queued and a delivery loop
 * sends it, retrying with backoff across failures and restarts until its link expires; failures stay
 * visible in the outbox. A crash between the SMTP server's acceptance and the row's update sends
 * that mail again on restart: at least once, never lost.
 */
export class MailDelivery {
  private readonly transport?: Transporter;
  private readonly loop: MailDeliveryLoop;

  constructor(
    private readonly store: Store,
    private readonly options: MailDeliveryOptions,
    logger: Logger,
  ) {
    if (options.smtpUrl) {
      // Bounded waits: a dead server must fail an attempt (to be retried), not hold a shutdown. A few
      // pooled connections: one new connection per mail could not keep up with a burst of requests.
      this.transport = nodemailer.createTransport({ url: options.smtpUrl, pool: true, maxConnections: sendingConcurrency, maxMessages: 100, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 });
    }
    this.loop = new MailDeliveryLoop(store, { transport: this.transport, keepSent: options.keepInOutbox, retry: { ...defaultRetry, ...options.retry }, concurrency: sendingConcurrency }, logger);
    // Mails queued before a restart (or a crash) are due now.
    this.loop.wake();
  }

  get usesOutbox(): boolean {
    return this.options.keepInOutbox || !this.transport;
  }

  /**
   * The mutation that stores a mail (or a decoy: the same write, never sent), to be committed with
   * the code it carries; call `wake` once that commit resolved.
   */
  queue(mail: OutgoingMail, options: { decoy?: boolean; now?: number } = {}): Mutation {
    const now = options.now ?? Date.now();
    // A decoy gets a real mail's row in every column but one: queued when mails are (the loop then
    // drops it as it would send a mail), kept otherwise (swept later), so the write tells nothing.
    const delivery: MailDeliveryStatus = this.transport ? { state: 'queued', attempts: 0, nextAttemptAt: now } : { state: 'kept', attempts: 0 };
    return { kind: 'insertOutboxMessage', message: { ...mail, createdAt: now, delivery }, ...(options.decoy ? { decoy: true } : {}) };
  }

  /** Stores mails and the mutations they depend on in one commit, then hands them to delivery. */
  async commitAndSend(mutations: Mutation[]): Promise<void> {
    await this.store.commit(mutations);
    if (this.transport) this.loop.wake();
  }

  /** Hands mails committed by the caller (see `queue`) to delivery. */
  wake(): void {
    if (this.transport) this.loop.wake();
  }

  /** Waits for the delivery attempt in progress; no new one starts (shutdown: nothing half-sent). */
  async settle(): Promise<void> {
    await this.loop.stop();
  }

  close(): void {
    void this.loop.stop();
    this.transport?.close();
  }
}
