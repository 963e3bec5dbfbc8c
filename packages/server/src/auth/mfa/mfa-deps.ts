import type { AuthDeps } from '../core/auth-context.js';
import { askBeforeSend } from '../core/blocking-functions.js';
import type { Caller } from '../core/requests.js';
import type { SessionService } from '../core/sessions.js';
import type { HumanCheck, PhoneCodes } from '../core/verification.js';
import { authError } from '../errors.js';
import type { PendingCredentials } from './pending-credentials.js';
import type { RecoveryCodes } from './recovery-codes.js';
import type { SealingKeys } from './sealing.js';
import { projectOf } from '../tenants/realm.js';
import type { TotpVerifier } from './totp.js';

/** What the multi-factor services work with. */
export interface MfaDeps {
  auth: AuthDeps;
  sessions: SessionService;
  keys: SealingKeys;
  pending: PendingCredentials;
  totp: TotpVerifier;
  /** Milliseconds since the epoch (a fake one in tests): pending credentials, enrolment sessions, TOTP steps. */
  clock: () => number;
  /** SMS second factors need both (auth/phone/, auth/captcha/); without them they answer OPERATION_NOT_ALLOWED. */
  sms?: { codes: PhoneCodes & { requireDelivery(): unknown }; humanCheck: HumanCheck };
  /** One-time recovery codes (recovery-codes.ts): the second step for someone who lost the factor. */
  recoveryCodes?: RecoveryCodes;
}

/** Sends an SMS code to a second factor's number after the page's human check, answering its sessionInfo. */
export async function sendSecondFactorCode(
  deps: MfaDeps,
  caller: Caller,
  phoneNumber: string,
  recaptchaToken: string | undefined,
  smsType: 'MULTI_FACTOR_SIGN_IN' | 'MULTI_FACTOR_ENROLLMENT',
): Promise<string> {
  const sms = requireSms(deps);
  // No sender, no code: refused before the page's human check is spent.
  sms.codes.requireDelivery();
  // reCAPTCHA tokens belong to the project (its site key), whichever of its tenants asks.
  await sms.humanCheck.verify(projectOf(caller.realm), recaptchaToken);
  await askBeforeSend(deps.auth.blocking, { eventType: 'beforeSendSms', realm: caller.realm, phoneNumber, smsType, ipAddress: caller.clientIp });
  return sms.codes.send(caller.realm, phoneNumber, caller.clientIp);
}

export function requireSms(deps: MfaDeps): NonNullable<MfaDeps['sms']> {
  if (!deps.sms) throw authError('OPERATION_NOT_ALLOWED', 'SMS second factors are not available on this server.');
  return deps.sms;
}

/** Where a TOTP secret is sealed: only this enrolment of this account of this project opens it. */
export function totpSecretContext(projectId: string, localId: string, enrollmentId: string): string {
  return `${projectId}/${localId}/${enrollmentId}`;
}

/** The throttle key of an enrolment's wrong codes. */
export function totpThrottleKey(projectId: string, localId: string, enrollmentId: string): string {
  return `${projectId}\u0000${localId}\u0000${enrollmentId}`;
}
