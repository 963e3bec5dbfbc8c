import type { MfaEnrollmentRecord, UserRecord } from '../../storage/store.js';
import { authenticate, requireRecentLogin } from '../core/auth-context.js';
import type { Caller } from '../core/requests.js';
import { nowSeconds, passedSecondStep, secondFactorOf, type IdTokenClaims } from '../core/tokens.js';
import { authError } from '../errors.js';
import { checkFactorDisplayName, e164, factorIdOf, maxEnrollments, newEnrollmentId } from './enrollments.js';
import { adjacentIntervals, mfaEnabled, smsFactorsEnabled, totpFactorsEnabled, type MultiFactorConfig } from './mfa-config.js';
import { requireSms, sendSecondFactorCode, totpSecretContext, totpThrottleKey, type MfaDeps } from './mfa-deps.js';
import type { FinalizeMfaEnrollmentRequest, MfaTokens, StartMfaEnrollmentRequest, StartMfaEnrollmentResponse, WithdrawMfaRequest } from './mfa-requests.js';
import { newTotpSecret, type TotpFormat } from './totp.js';

/** First factors that cannot carry a second one, as on Google's servers. */
const ineligibleFirstFactors = new Set(['anonymous', 'phone', 'custom', 'gc.apple.com']);
/** How long a TOTP enrolment may take from start to finalize (scanning the code, typing one). */
export const totpEnrollmentWindowMs = 10 * 60_000;
const maxSessionInfoLength = 4096;

interface TotpEnrollmentSession {
  /** The enrolment id, chosen at start: finalizing twice would make it twice, which is refused. */
  i: string;
  c: number;
  s: string;
  f: TotpFormat;
  e: number;
}

/** v2 accounts/mfaEnrollment:start|finalize|withdraw: adding and removing second factors. */
export class MfaEnrollmentService {
  constructor(private readonly deps: MfaDeps) {}

  async start(caller: Caller, request: StartMfaEnrollmentRequest): Promise<StartMfaEnrollmentResponse> {
    const { user, config } = await this.enrollingUser(caller, request.idToken);
    if ((user.mfaInfo?.length ?? 0) >= maxEnrollments) throw authError('SECOND_FACTOR_LIMIT_EXCEEDED');
    const kind = onlyOne(request.phoneEnrollmentInfo, request.totpEnrollmentInfo, 'phoneEnrollmentInfo', 'totpEnrollmentInfo');
    if (kind === 'totp') {
      if (!totpFactorsEnabled(config)) throw authError('OPERATION_NOT_ALLOWED', 'TOTP based MFA not enabled.');
      const format: TotpFormat = { ...config.totpCodeFormat };
      const expiresAt = this.deps.clock() + totpEnrollmentWindowMs;
      const session: TotpEnrollmentSession = { i: newEnrollmentId(user.mfaInfo ?? []), c: user.createdAt, s: newTotpSecret(), f: format, e: expiresAt };
      const sessionInfo = this.deps.keys.seal('totp-enrollment', JSON.stringify(session), enrollmentContext(caller, user));
      // The one time the shared secret leaves the server: the user's authenticator app needs it.
      return {
        totpSessionInfo: {
          sharedSecretKey: session.s,
          verificationCodeLength: format.verificationCodeLength,
          hashingAlgorithm: format.hashingAlgorithm,
          periodSec: format.periodSec,
          sessionInfo,
          finalizeEnrollmentTime: new Date(expiresAt).toISOString(),
        },
      };
    }
    if (!smsFactorsEnabled(config)) throw authError('OPERATION_NOT_ALLOWED', 'SMS based MFA not enabled.');
    // Google answers a missing number as an invalid one.
    const phoneNumber = e164(request.phoneEnrollmentInfo?.phoneNumber);
    if (!phoneNumber) throw authError('INVALID_PHONE_NUMBER', 'Invalid format.');
    if (user.mfaInfo?.some((e) => e.phoneInfo === phoneNumber)) throw authError('SECOND_FACTOR_EXISTS', 'Phone number already enrolled as second factor for this account.');
    const sessionInfo = await sendSecondFactorCode(this.deps, caller, phoneNumber, request.phoneEnrollmentInfo?.recaptchaToken, 'MULTI_FACTOR_ENROLLMENT');
    return { phoneSessionInfo: { sessionInfo } };
  }

  async finalize(caller: Caller, request: FinalizeMfaEnrollmentRequest): Promise<MfaTokens> {
    const { user, claims, config } = await this.enrollingUser(caller, request.idToken);
    const displayName = checkFactorDisplayName(request.displayName);
    const kind = onlyOne(request.phoneVerificationInfo, request.totpVerificationInfo, 'phoneVerificationInfo', 'totpVerificationInfo');
    const now = this.deps.clock();
    let record: MfaEnrollmentRecord;
    if (kind === 'totp') {
      if (!totpFactorsEnabled(config)) throw authError('OPERATION_NOT_ALLOWED', 'TOTP based MFA not enabled.');
      const session = this.openTotpSession(caller, user, request.totpVerificationInfo?.sessionInfo);
      const key = totpThrottleKey(caller.realm, user.localId, session.i);
      const step = await this.deps.totp.verify(key, caller.clientIp, session.s, request.totpVerificationInfo?.verificationCode, session.f, adjacentIntervals(config));
      const sealedSecret = this.deps.keys.seal('totp-secret', session.s, totpSecretContext(caller.realm, user.localId, session.i));
      record = { mfaEnrollmentId: session.i, enrolledAt: now, totpInfo: { sealedSecret, ...session.f, lastUsedStep: step } };
    } else {
      if (!smsFactorsEnabled(config)) throw authError('OPERATION_NOT_ALLOWED', 'SMS based MFA not enabled.');
      const { sessionInfo, code } = request.phoneVerificationInfo ?? {};
      const phoneInfo = await requireSms(this.deps).codes.redeem(caller.realm, sessionInfo, code);
      record = { mfaEnrollmentId: newEnrollmentId(user.mfaInfo ?? []), enrolledAt: now, phoneInfo };
    }
    if (displayName !== undefined) record.displayName = displayName;
    return this.enroll(caller, claims, user, record);
  }

  async withdraw(caller: Caller, request: WithdrawMfaRequest): Promise<MfaTokens> {
    const { claims, user } = await authenticate(this.deps.auth, caller, request.idToken);
    requireRecentLogin(this.deps.auth, claims);
    const id = request.mfaEnrollmentId;
    if (!id) throw authError('MISSING_MFA_ENROLLMENT_ID', 'No second factor identifier is provided.');
    if (!user.mfaInfo?.some((e) => e.mfaEnrollmentId === id)) throw authError('MFA_ENROLLMENT_NOT_FOUND');
    await this.requireSecondFactorPassed(caller, claims);
    // Like a password change: every other session ends. This one goes on, without the factor if it used it.
    const revokedAt = nowSeconds();
    const passed = secondFactorOf(claims);
    const secondFactor = passed?.enrollmentId === id ? undefined : passed;
    const provider = claims.firebase.sign_in_provider;
    const refresh = this.deps.auth.tokens.newRefreshToken(caller.realm, user, claims.auth_time, provider, undefined, secondFactor);
    const updated = await this.deps.auth.users.update(
      caller.realm,
      user.localId,
      (u) => {
        const rest = (u.mfaInfo ?? []).filter((e) => e.mfaEnrollmentId !== id);
        if (rest.length === (u.mfaInfo?.length ?? 0)) throw authError('MFA_ENROLLMENT_NOT_FOUND');
        const next: UserRecord = { ...u, validSince: Math.max(u.validSince, revokedAt) };
        if (rest.length) next.mfaInfo = rest;
        else {
          // Recovery codes stand in for the second step: with none left, they go too (a later factor gets new ones).
          delete next.mfaInfo;
          delete next.recoveryCodes;
        }
        return next;
      },
      () => [refresh.mutation],
    );
    const tokens = await this.deps.sessions.tokensFor(caller.realm, updated, claims.auth_time, provider, refresh.token, undefined, secondFactor);
    return { idToken: tokens.idToken, refreshToken: tokens.refreshToken };
  }

  /**
   * Withdrawing a factor lowers the account's protection, so the session asking must be one the
   * second step protects: it passed a second factor (any of the account's: a lost phone is removed
   * after signing in with the authenticator app), or began with a passkey (passedSecondStep). A first-factor-only session of an account with
   * factors (one an administrator gave factors to, or one started in the second of an enrolment)
   * is answered as Google answers a stale sign-in: the SDK's auth/requires-recent-login, after which
   * reauthentication asks for the second factor. Two sessions are whole without one, as at sign-in
   * (gate.ts): the project's MFA is switched off (no sign-in asks for a factor then), or the
   * session began with a custom token (the app's own server vouched for the user).
   */
  private async requireSecondFactorPassed(caller: Caller, claims: IdTokenClaims): Promise<void> {
    if (passedSecondStep(claims)) return;
    if (!mfaEnabled((await this.deps.auth.projects.config(caller.realm)).mfa)) return;
    throw authError('CREDENTIAL_TOO_OLD_LOGIN_AGAIN', 'Withdrawing a second factor needs a sign-in that passed one: sign in again.');
  }

  /** The account an enrolment is for: MFA on, a first factor that can carry a second, a verified email, a recent sign-in. */
  private async enrollingUser(caller: Caller, idToken: string | undefined): Promise<{ user: UserRecord; claims: IdTokenClaims; config: MultiFactorConfig }> {
    const config = (await this.deps.auth.projects.config(caller.realm)).mfa;
    if (!mfaEnabled(config)) throw authError('OPERATION_NOT_ALLOWED', 'Multi-factor authentication is not enabled for this project.');
    const { user, claims } = await authenticate(this.deps.auth, caller, idToken);
    if (ineligibleFirstFactors.has(claims.firebase.sign_in_provider)) throw authError('UNSUPPORTED_FIRST_FACTOR', 'MFA is not available for the given first factor.');
    // Someone who signed up with another's address must not lock its owner out with a second factor.
    if (!user.email || !user.emailVerified) throw authError('UNVERIFIED_EMAIL', 'Need to verify email first before enrolling second factors.');
    requireRecentLogin(this.deps.auth, claims);
    return { user, claims, config };
  }

  private openTotpSession(caller: Caller, user: UserRecord, sessionInfo: string | undefined): TotpEnrollmentSession {
    if (!sessionInfo) throw authError('MISSING_SESSION_INFO');
    const text = sessionInfo.length <= maxSessionInfoLength ? this.deps.keys.unseal('totp-enrollment', sessionInfo, enrollmentContext(caller, user)) : undefined;
    if (text === undefined) throw authError('INVALID_SESSION_INFO');
    const session = JSON.parse(text) as TotpEnrollmentSession;
    if (session.c !== user.createdAt) throw authError('INVALID_SESSION_INFO');
    if (this.deps.clock() >= session.e) throw authError('SESSION_EXPIRED');
    if (user.mfaInfo?.some((e) => e.mfaEnrollmentId === session.i)) throw authError('INVALID_SESSION_INFO', 'This enrolment is already finished.');
    return session;
  }

  /**
   * Adds the factor and answers the session's new tokens, which name it as the second factor
   * passed. Every other session ends (validSince), as Firebase documents for enroll: a session
   * begun before with the first factor alone (a stolen password's) would otherwise go on minting
   * tokens that never passed the new factor. Revocation is by the second, as Google's: the
   * enrolling session's new refresh token is issued at or after it.
   */
  private async enroll(caller: Caller, claims: IdTokenClaims, user: UserRecord, record: MfaEnrollmentRecord): Promise<MfaTokens> {
    const secondFactor = { factorId: factorIdOf(record), enrollmentId: record.mfaEnrollmentId };
    const provider = claims.firebase.sign_in_provider;
    const revokedAt = nowSeconds();
    const refresh = this.deps.auth.tokens.newRefreshToken(caller.realm, user, claims.auth_time, provider, undefined, secondFactor);
    const updated = await this.deps.auth.users.update(
      caller.realm,
      user.localId,
      (u) => {
        const current = u.mfaInfo ?? [];
        if (current.some((e) => e.mfaEnrollmentId === record.mfaEnrollmentId)) throw authError('INVALID_SESSION_INFO', 'This enrolment is already finished.');
        if (record.phoneInfo && current.some((e) => e.phoneInfo === record.phoneInfo)) {
          throw authError('SECOND_FACTOR_EXISTS', 'Phone number already enrolled as second factor for this account.');
        }
        if (current.length >= maxEnrollments) throw authError('SECOND_FACTOR_LIMIT_EXCEEDED');
        const next: UserRecord = { ...u, mfaInfo: [...current, record], validSince: Math.max(u.validSince, revokedAt) };
        // A first factor never revives codes made for factors since removed (an administrator's removal included).
        if (current.length === 0) delete next.recoveryCodes;
        return next;
      },
      () => [refresh.mutation],
    );
    const tokens = await this.deps.sessions.tokensFor(caller.realm, updated, claims.auth_time, provider, refresh.token, undefined, secondFactor);
    return { idToken: tokens.idToken, refreshToken: tokens.refreshToken };
  }
}

function enrollmentContext(caller: Caller, user: UserRecord): string {
  return `${caller.realm}/${user.localId}`;
}

/** Which of the two alternatives a request carries: exactly one, as Google requires. */
function onlyOne(phone: unknown, totp: unknown, phoneName: string, totpName: string): 'phone' | 'totp' {
  if ((phone === undefined) === (totp === undefined)) throw authError('INVALID_ARGUMENT', `Exactly one of ${phoneName} or ${totpName} is required.`);
  return phone !== undefined ? 'phone' : 'totp';
}
