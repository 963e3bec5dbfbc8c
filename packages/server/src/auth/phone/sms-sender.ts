import type { Mutation, SmsOutboxMessage } from '../../storage/store.js';

/** A text message carrying a verification code: an SMS outbox row before it has an id. */
export type SmsMessage = Omit<SmsOutboxMessage, 'id'>;

/**
 * Where text messages go. A message is first whatever `keep` returns, committed together with its
 * code before the request is answered (so nothing acknowledged is lost); `send` then hands it to the
 * phone network, and throws an ApiError when that failed for good.
 */
export interface SmsSender {
  keep(message: SmsMessage): Mutation[];
  send(message: SmsMessage): Promise<void>;
}

/** The outbox: messages stay in the store for developers (and the Auth emulator's verificationCodes). */
export class OutboxSmsSender implements SmsSender {
  keep(message: SmsMessage): Mutation[] {
    return [{ kind: 'insertSmsOutboxMessage', message: { ...message } }];
  }

  async send(): Promise<void> {
    // Kept is delivered: developers read the outbox.
  }
}

/** Several senders at once (--dev with a provider: the outbox keeps a copy of what the provider sends). */
export class SmsSenders implements SmsSender {
  constructor(private readonly senders: SmsSender[]) {}

  keep(message: SmsMessage): Mutation[] {
    return this.senders.flatMap((sender) => sender.keep(message));
  }

  async send(message: SmsMessage): Promise<void> {
    for (const sender of this.senders) await sender.send(message);
  }
}

/** The text Google sends, with the project's name. */
export function smsBody(code: string, projectName: string): string {
  return `${code} is your verification code for ${projectName}.`;
}
