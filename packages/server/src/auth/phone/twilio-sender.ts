import type { ApiError } from '../../http/api-error.js';
import { authError, smsNotDelivered } from '../errors.js';
import type { SmsMessage, SmsSender } from './sms-sender.js';

/** An SMS provider with Twilio's Messages API (Twilio itself, or any service speaking it). */
export interface TwilioOptions {
  /** The API origin, e.g. https://api.twilio.com. */
  baseUrl: string;
  accountSid: string;
  /** Never logged. */
  authToken: string;
  /** The sending number (E.164) or alphanumeric sender id. */
  from: string;
  /** Waits before the retries of a failed attempt (network error, 429 or 5xx). */
  retryDelaysMs?: number[];
  /** One attempt's time limit. */
  timeoutMs?: number;
}

/** What is logged of a failed attempt: never the token, the text or the code. */
export interface SmsAttemptFailure {
  attempt: number;
  status?: number;
  providerCode?: number;
  reason: string;
}

const defaultRetryDelaysMs = [250, 1000];
const defaultTimeoutMs = 10_000;
/** Twilio's codes for a number it cannot text: the caller's number is wrong, not the service. */
const invalidNumberCodes = new Set([21211, 21214, 21217, 21401, 21407, 21421, 21614]);

/**
 * Sends through `POST {base}/2010-04-01/Accounts/{sid}/Messages.json` (form fields To, From, Body;
 * HTTP basic auth with the account sid and token). Network errors, 429 and 5xx are retried a
 * couple of times; a refusal (other 4xx) is not. The code expires in minutes, so there is no queue:
 * the request waits for the provider's answer and says if the message could not be sent.
 */
export class TwilioSmsSender implements SmsSender {
  private readonly endpoint: string;
  private readonly authorization: string;

  constructor(
    private readonly options: TwilioOptions,
    private readonly onFailure: (failure: SmsAttemptFailure) => void = () => undefined,
  ) {
    this.endpoint = `${options.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages.json`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  }

  keep(): [] {
    return [];
  }

  async send(message: SmsMessage): Promise<void> {
    const delays = this.options.retryDelaysMs ?? defaultRetryDelaysMs;
    const form = new URLSearchParams({ To: message.phoneNumber, From: this.options.from, Body: message.body }).toString();
    let lastStatus: number | undefined;
    for (let attempt = 1; attempt <= delays.length + 1; attempt++) {
      if (attempt > 1) await sleep(delays[attempt - 2]!);
      let response: Response;
      try {
        response = await fetch(this.endpoint, {
          method: 'POST',
          headers: { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form,
          redirect: 'error',
          signal: AbortSignal.timeout(this.options.timeoutMs ?? defaultTimeoutMs),
        });
      } catch (error) {
        this.onFailure({ attempt, reason: error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network error' });
        continue;
      }
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      lastStatus = response.status;
      const providerCode = await providerErrorCode(response);
      this.onFailure({ attempt, status: response.status, ...(providerCode !== undefined ? { providerCode } : {}), reason: 'refused' });
      if (response.status === 429 || response.status >= 500) continue;
      throw refusal(response.status, providerCode);
    }
    throw smsNotDelivered(lastStatus === undefined ? 'the SMS provider could not be reached' : `the SMS provider answered ${lastStatus}`);
  }
}

function refusal(status: number, providerCode: number | undefined): ApiError {
  if (providerCode !== undefined && invalidNumberCodes.has(providerCode)) return authError('INVALID_PHONE_NUMBER', 'The SMS provider cannot send to this number.');
  return smsNotDelivered(`the SMS provider refused the message (${status}${providerCode !== undefined ? `, code ${providerCode}` : ''})`);
}

/** Twilio's error body is `{code, message, more_info, status}`; only the numeric code is read. */
async function providerErrorCode(response: Response): Promise<number | undefined> {
  try {
    const body = (await response.json()) as { code?: unknown };
    return typeof body.code === 'number' && Number.isInteger(body.code) ? body.code : undefined;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
