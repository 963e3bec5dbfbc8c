import { OutboxSmsSender, SmsSenders, type SmsSender } from './sms-sender.js';
import { TwilioSmsSender, type SmsAttemptFailure, type TwilioOptions } from './twilio-sender.js';

export type SmsDeliveryMode = 'outbox' | 'provider' | 'outbox+provider' | 'none';

export interface SmsDeliveryOptions {
  dev: boolean;
  /** --sms-outbox: keep texts in the outbox outside --dev too (their codes in plain text). */
  outbox: boolean;
  provider?: TwilioOptions;
}

/**
 * Where texts go: the outbox always in --dev (and with --sms-outbox), the provider when one is
 * configured, both in --dev with a provider. Production with neither sends nothing, and
 * sendVerificationCode says so (Google would send a real text; silently keeping the code would
 * leave users waiting for one).
 */
export function chooseSmsSender(options: SmsDeliveryOptions, onFailure: (failure: SmsAttemptFailure) => void): { sender?: SmsSender; mode: SmsDeliveryMode } {
  const keep = options.dev || options.outbox;
  const provider = options.provider ? new TwilioSmsSender(options.provider, onFailure) : undefined;
  if (keep && provider) return { sender: new SmsSenders([new OutboxSmsSender(), provider]), mode: 'outbox+provider' };
  if (provider) return { sender: provider, mode: 'provider' };
  if (keep) return { sender: new OutboxSmsSender(), mode: 'outbox' };
  return { mode: 'none' };
}
