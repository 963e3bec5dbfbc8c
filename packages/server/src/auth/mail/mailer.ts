import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { OutboxMessage, Store } from '../../storage/store.js';

export type OutgoingMail = Omit<OutboxMessage, 'id' | 'createdAt'> & { from: string };

export interface MailDeliveryOptions {
  /** `smtp://user:pass@host:port` (or `smtps://`); undefined: no SMTP. */
  smtpUrl?: string;
  /** Keep every message in the outbox too (always on in --dev, and whenever there is no SMTP). */
  keepInOutbox: boolean;
}

/**
 * Delivers action mails: by SMTP (nodemailer) when configured, and into the store's outbox when
 * there is no SMTP or in dev mode, where developers and tests read links without a mailbox.
 */
export class MailDelivery {
  private readonly transport?: Transporter;

  constructor(
    private readonly store: Store,
    private readonly options: MailDeliveryOptions,
    private readonly logger: Logger,
  ) {
    if (options.smtpUrl) this.transport = nodemailer.createTransport(options.smtpUrl);
  }

  get usesOutbox(): boolean {
    return this.options.keepInOutbox || !this.transport;
  }

  async deliver(mail: OutgoingMail): Promise<void> {
    if (this.usesOutbox) {
      const { from: _from, ...message } = mail;
      await this.store.commit([{ kind: 'insertOutboxMessage', message: { ...message, createdAt: Date.now() } }]);
    }
    if (this.transport) {
      try {
        await this.transport.sendMail({ from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      } catch (err) {
        // The code is valid either way; the user can ask again. Never log the message body (it holds the link).
        this.logger.error({ err: { message: (err as Error).message }, requestType: mail.requestType }, 'mail delivery failed');
        throw err;
      }
    }
  }

  close(): void {
    this.transport?.close();
  }
}
