/**
 * Calls the code base's Auth blocking functions as Google's Identity Toolkit does: POST
 * `{"data":{"jwt": ...}}` whose claims describe the event (event_type, sign_in_method, user_record
 * in snake case, ip_address, locale...), then reads `{"userRecord": {..., "updateMask"}}` or an
 * HttpsError. The JWT is unsigned (`alg: none`), as Google's emulator sends it: the worker skips
 * verification (FIREBASE_DEBUG_FEATURES), and only Hearth can reach the worker.
 */
import { randomUUID } from 'node:crypto';
import { blockingRefusal, type BlockingAnswer, type BlockingEvent, type BlockingEventType, type BlockingFunctions, type SendEvent, type SendEventType } from '../auth/core/blocking-functions.js';
import type { UserRecord } from '../storage/store.js';
import { storedCustomClaims } from './auth-triggers.js';
import type { FunctionEndpoint } from './manifest.js';
import { WorkerUnavailable, type WorkerProcess } from './worker-process.js';

const eventTypes: Record<string, BlockingEventType | SendEventType> = {
  'providers/cloud.auth/eventTypes/user.beforeCreate': 'beforeCreate',
  'providers/cloud.auth/eventTypes/user.beforeSignIn': 'beforeSignIn',
  'providers/cloud.auth/eventTypes/user.beforeSendEmail': 'beforeSendEmail',
  'providers/cloud.auth/eventTypes/user.beforeSendSms': 'beforeSendSms',
};

/** Google's limit for a blocking function's answer. */
const defaultTimeoutSeconds = 7;

function userRecordClaims(user: UserRecord, tenantId: string | undefined): Record<string, unknown> {
  const customClaims = storedCustomClaims(user);
  return {
    uid: user.localId,
    ...(user.email !== undefined ? { email: user.email } : {}),
    email_verified: user.emailVerified,
    ...(user.displayName !== undefined ? { display_name: user.displayName } : {}),
    ...(user.photoUrl !== undefined ? { photo_url: user.photoUrl } : {}),
    ...(user.phoneNumber !== undefined ? { phone_number: user.phoneNumber } : {}),
    disabled: user.disabled,
    ...(customClaims !== undefined ? { custom_claims: customClaims } : {}),
    provider_data: user.providerUserInfo.map((info) => ({
      provider_id: info.providerId,
      uid: info.rawId,
      ...(info.email !== undefined ? { email: info.email } : {}),
      ...(info.displayName !== undefined ? { display_name: info.displayName } : {}),
      ...(info.photoUrl !== undefined ? { photo_url: info.photoUrl } : {}),
      ...(info.phoneNumber !== undefined ? { phone_number: info.phoneNumber } : {}),
    })),
    metadata: { creation_time: user.createdAt, ...(user.lastLoginAt !== undefined ? { last_sign_in_time: user.lastLoginAt } : {}) },
    ...(tenantId ? { tenant_id: tenantId } : {}),
  };
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields the answer's updateMask names (a comma list, or an array), checked for type. */
export function answerOf(body: unknown): BlockingAnswer | undefined {
  if (!isRecord(body) || !isRecord(body.userRecord)) return undefined;
  const record = body.userRecord;
  const mask = typeof record.updateMask === 'string' ? record.updateMask.split(',') : Array.isArray(record.updateMask) ? record.updateMask : [];
  const answer: BlockingAnswer = {};
  for (const field of mask.map((name) => String(name).trim())) {
    const value = record[field];
    if (field === 'displayName' && typeof value === 'string') answer.displayName = value;
    // firebase-functions writes photoURL; Google's emulator reads photoUrl: both are taken.
    else if ((field === 'photoURL' || field === 'photoUrl') && typeof value === 'string') answer.photoUrl = value;
    else if (field === 'disabled' && typeof value === 'boolean') answer.disabled = value;
    else if (field === 'emailVerified' && typeof value === 'boolean') answer.emailVerified = value;
    else if (field === 'customClaims' && isRecord(value)) answer.customClaims = value;
    else if (field === 'sessionClaims' && isRecord(value)) answer.sessionClaims = value;
    else if (field) throw blockingRefusal(`The blocking function answered an unreadable ${field}`);
  }
  return answer;
}

export class BlockingCalls implements BlockingFunctions {
  private readonly byType = new Map<BlockingEventType | SendEventType, FunctionEndpoint>();

  constructor(
    private readonly projectId: string,
    endpoints: readonly FunctionEndpoint[],
    private readonly worker: WorkerProcess,
  ) {
    for (const endpoint of endpoints) {
      if (endpoint.kind.type !== 'blocking') continue;
      const type = eventTypes[endpoint.kind.eventType];
      if (type) this.byType.set(type, endpoint);
    }
  }

  get size(): number {
    return this.byType.size;
  }

  has(eventType: BlockingEventType | SendEventType): boolean {
    return this.byType.has(eventType);
  }

  async call(event: BlockingEvent): Promise<BlockingAnswer | undefined> {
    const [project, , tenantId] = event.realm.split('/');
    const body = await this.invoke(event.eventType, project, {
      event_type: event.eventType,
      ...(event.ipAddress ? { ip_address: event.ipAddress } : {}),
      ...(event.locale ? { locale: event.locale } : {}),
      sub: event.user.localId,
      sign_in_method: event.signInMethod,
      ...(event.user.email !== undefined ? { email: event.user.email } : {}),
      ...(event.user.phoneNumber !== undefined ? { phone_number: event.user.phoneNumber } : {}),
      ...(tenantId ? { tenant_id: tenantId } : {}),
      user_record: userRecordClaims(event.user, tenantId),
    });
    return body === undefined ? undefined : answerOf(body);
  }

  /**
   * beforeEmailSent / beforeSmsSent: no account in the token (firebase-functions reads none for
   * them), the mail's email_type or the SMS's sms_type. Their answer can only say
   * `recaptchaActionOverride`; Hearth has no reCAPTCHA Enterprise score to override, so "BLOCK"
   * refuses the send (as a throw does) and anything else lets it go.
   */
  async callBeforeSend(event: SendEvent): Promise<void> {
    const [project, , tenantId] = event.realm.split('/');
    const body = await this.invoke(event.eventType, project, {
      event_type: event.eventType,
      ...(event.ipAddress ? { ip_address: event.ipAddress } : {}),
      ...(event.email !== undefined ? { email: event.email } : {}),
      ...(event.emailType ? { email_type: event.emailType } : {}),
      ...(event.phoneNumber !== undefined ? { phone_number: event.phoneNumber } : {}),
      ...(event.smsType ? { sms_type: event.smsType } : {}),
      ...(tenantId ? { tenant_id: tenantId } : {}),
    });
    if (isRecord(body) && body.recaptchaActionOverride === 'BLOCK') throw blockingRefusal('The blocking function blocked this request');
  }

  /** Posts the event's JWT to its function: the answer's JSON body, or undefined when none is installed for it. */
  private async invoke(eventType: BlockingEventType | SendEventType, project: string | undefined, eventClaims: Record<string, unknown>): Promise<unknown> {
    const endpoint = this.byType.get(eventType);
    if (!endpoint || project !== this.projectId) return undefined;
    const now = Math.floor(Date.now() / 1000);
    const functionUri = `https://${endpoint.region}-${this.projectId}.cloudfunctions.net/${endpoint.name}`;
    const claims = { iss: `https://securetoken.google.com/${this.projectId}`, aud: functionUri, iat: now, exp: now + 3600, event_id: randomUUID(), ...eventClaims };
    const jwt = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;
    let answer;
    try {
      answer = await this.worker.request(`/__hearth/http/${encodeURIComponent(endpoint.name)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ data: { jwt } }),
        timeoutMs: (endpoint.timeoutSeconds ?? defaultTimeoutSeconds) * 1000,
      });
    } catch (error) {
      if (error instanceof WorkerUnavailable) throw blockingRefusal(error.reason === 'timeout' ? 'The blocking function timed out' : 'The blocking function is not available');
      throw error;
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body.toString('utf8'));
    } catch {
      throw blockingRefusal(`The blocking function answered ${answer.status} without JSON`);
    }
    if (answer.status !== 200) {
      const error = isRecord(body) && isRecord(body.error) ? body.error : {};
      throw blockingRefusal(typeof error.message === 'string' ? error.message : `The blocking function answered ${answer.status}`);
    }
    return body;
  }
}
