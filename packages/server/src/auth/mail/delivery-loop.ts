import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailDeliveryStatus, OutboxMessage, Store } from '../../storage/store.js';

export interface RetryPolicy {
  /** The wait after the first failed attempt; each further failure doubles it. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export interface DeliveryLoopOptions {
  /** Undefined: no SMTP; queued mails are then kept in the outbox, and decoys dropped. */
  transport: Transporter | undefined;
  /** Keep a sent mail's row (state `sent`) instead of deleting it: the outbox keeps copies. */
  keepSent: boolean;
  retry: RetryPolicy;
  /** Mails in flight at once (each row's outcome is its own commit). */
  concurrency: number;
}

const batchSize = 40;
const maxErrorLength = 300;
const decoySweepEveryMs = 10 * 60_000;

/**
 * Sends queued outbox rows, a few at a time, oldest due first; sleeps until the next row is due or
 * until woken by a new one. Every outcome is committed on the row: deleted or `sent`, queued again
 * with a later attempt time, or `failed` (refused for good, or the link expired before delivery).
 */
export class MailDeliveryLoop {
  private running: Promise<void> | undefined;
  private wakeAgain = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly decoySweep: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly options: DeliveryLoopOptions,
    private readonly logger: Logger,
  ) {
    // Decoys of outbox delivery are kept like mails when written and dropped here, long after.
    this.decoySweep = setInterval(() => void this.sweepDecoys(), decoySweepEveryMs);
    this.decoySweep.unref();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.decoySweep);
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        this.wakeAgain = false;
        const due = await this.store.listDueMail(Date.now(), batchSize);
        for (let i = 0; i < due.length; i += this.options.concurrency) {
          if (this.stopped) return;
          await Promise.all(due.slice(i, i + this.options.concurrency).map((mail) => this.attempt(mail)));
        }
        if (due.length < batchSize && !this.wakeAgain) break;
      }
      if (this.stopped) return;
      const next = await this.store.nextMailDueAt();
      if (next !== undefined) {
        this.timer = setTimeout(() => this.wake(), Math.max(0, next - Date.now()));
        this.timer.unref();
      }
    } catch (err) {
      // The store failed (closing, disk full): the rows stay queued for the next wake or start.
      if (!this.stopped) this.logger.error({ err: { message: (err as Error).message } }, 'mail delivery loop failed');
      if (!this.stopped) {
        this.timer = setTimeout(() => this.wake(), this.options.retry.maxDelayMs);
        this.timer.unref();
      }
    }
  }

  private async sweepDecoys(): Promise<void> {
    try {
      await this.store.commit([{ kind: 'deleteOutboxDecoys', createdBefore: Date.now() - decoySweepEveryMs }]);
    } catch (err) {
      if (!this.stopped) this.logger.error({ err: { message: (err as Error).message } }, 'decoy sweep failed');
    }
  }

  private async attempt(mail: OutboxMessage & { decoy: boolean }): Promise<void> {
    const { transport } = this.options;
    if (mail.decoy) {
      await this.store.commit([{ kind: 'deleteOutboxMessage', id: mail.id }]);
      return;
    }
    if (!transport) {
      // Queued while SMTP was configured, and it no longer is: the outbox is the delivery now.
      await this.store.commit([{ kind: 'updateMailDelivery', id: mail.id, delivery: { ...mail.delivery, state: 'kept' } }]);
      return;
    }
    const attempts = mail.delivery.attempts + 1;
    try {
      await transport.sendMail({ from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    } catch (err) {
      await this.failed(mail, attempts, err as Error & { responseCode?: number });
      return;
    }
    const now = Date.now();
    const delivery: MailDeliveryStatus = { state: 'sent', attempts, sentAt: now };
    await this.store.commit([this.options.keepSent ? { kind: 'updateMailDelivery', id: mail.id, delivery } : { kind: 'deleteOutboxMessage', id: mail.id }]);
  }

  private async failed(mail: OutboxMessage, attempts: number, err: Error & { responseCode?: number }): Promise<void> {
    const now = Date.now();
    const nextAttemptAt = now + this.delayAfter(attempts);
    // 5xx is the server's final word on this message; 4xx and network failures are worth retrying.
    const refused = typeof err.responseCode === 'number' && err.responseCode >= 500;
    const expired = mail.expiresAt !== undefined && nextAttemptAt >= mail.expiresAt;
    const lastError = (err.message || String(err)).slice(0, maxErrorLength);
    const delivery: MailDeliveryStatus = refused || expired ? { state: 'failed', attempts, lastError } : { state: 'queued', attempts, nextAttemptAt, lastError };
    // Never log the message (it holds the link): which mail, which attempt, and the server's answer.
    this.logger.warn({ mailId: mail.id, requestType: mail.requestType, attempts, state: delivery.state, err: { message: lastError } }, 'mail delivery failed');
    await this.store.commit([{ kind: 'updateMailDelivery', id: mail.id, delivery }]);
  }

  /** Doubling waits with a little jitter, so mails queued together do not retry in lockstep. */
  private delayAfter(attempts: number): number {
    const { firstDelayMs, maxDelayMs } = this.options.retry;
    const base = Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(attempts - 1, 30));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
}
