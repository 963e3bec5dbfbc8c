import { ApiError } from '../../http/api-error.js';
import type { MfaEnrollmentRecord, SecondFactorClaim, UserRecord } from '../../storage/store.js';
import type { Caller } from '../core/requests.js';
import { authError } from '../errors.js';
import { factorIdOf } from './enrollments.js';
import { adjacentIntervals, mfaEnabled } from './mfa-config.js';
import { requireSms, sendSecondFactorCode, totpSecretContext, totpThrottleKey, type MfaDeps } from './mfa-deps.js';
import type { FinalizeMfaSignInRequest, MfaTokens, StartMfaSignInRequest } from './mfa-requests.js';
import type { PendingSignIn } from './pending-credentials.js';
import { recoveryCodeFactor } from './recovery-codes.js';

/**
 * v2 accounts/mfaSignIn:start|finalize: the second step of a sign-in whose first factor answered
 * a pending credential. Factors stay usable when their kind is switched off for new enrolments;
 * only switching multi-factor off as a whole stops asking for them.
 */
export class MfaSignInService {
  constructor(private readonly deps: MfaDeps) {}

  /** SMS only: sends a code to the chosen factor's number. TOTP has no start (the app has the code). */
  async start(caller: Caller, request: StartMfaSignInRequest): Promise<{ phoneResponseInfo: { sessionInfo: string } }> {
    await this.requireEnabled(caller);
    const { user } = await this.pendingSignIn(caller, request.mfaPendingCredential, 'MISSING_MFA_PENDING_CREDENTIAL');
    const enrollment = findEnrollment(user, request.mfaEnrollmentId);
    if (!enrollment.phoneInfo) throw authError('INVALID_ARGUMENT', 'This second factor is not an SMS one; it has no code to send.');
    const sessionInfo = await sendSecondFactorCode(this.deps, caller, enrollment.phoneInfo, request.phoneSignInInfo?.recaptchaToken, 'MULTI_FACTOR_SIGN_IN');
    return { phoneResponseInfo: { sessionInfo } };
  }

  async finalize(caller: Caller, request: FinalizeMfaSignInRequest): Promise<MfaTokens> {
    await this.requireEnabled(caller);
    // Google asks for the pending credential here with another code than at start.
    const { pending, user } = await this.pendingSignIn(caller, request.mfaPendingCredential, 'MISSING_CREDENTIAL');
    if (request.recoveryCodeVerificationInfo !== undefined) return this.finalizeWithRecoveryCode(caller, request, pending, user);
    if (request.totpVerificationInfo !== undefined && request.phoneVerificationInfo === undefined) {
      const enrollment = findEnrollment(user, request.mfaEnrollmentId);
      if (!enrollment.totpInfo) throw authError('MFA_ENROLLMENT_NOT_FOUND');
      const totp = enrollment.totpInfo;
      const secret = this.deps.keys.unseal('totp-secret', totp.sealedSecret, totpSecretContext(caller.realm, user.localId, enrollment.mfaEnrollmentId));
      // Only a replaced key file does this: the server's fault, not the request's.
      if (secret === undefined) throw new ApiError(500, 'The TOTP secret cannot be opened: the data folder\'s mfa-key is not the one it was sealed with.', 'INTERNAL');
      const key = totpThrottleKey(caller.realm, user.localId, enrollment.mfaEnrollmentId);
      const config = (await this.deps.auth.projects.config(caller.realm)).mfa;
      const step = await this.deps.totp.verify(key, caller.clientIp, secret, request.totpVerificationInfo.verificationCode, totp, adjacentIntervals(config), totp.lastUsedStep);
      // The step is recorded in the sign-in's own commit; a concurrent use of the same code finds it there.
      return this.complete(pending, user, factorClaim(enrollment), (u) => ({
        ...u,
        mfaInfo: (u.mfaInfo ?? []).map((e) => {
          if (e.mfaEnrollmentId !== enrollment.mfaEnrollmentId || !e.totpInfo) return e;
          if (e.totpInfo.lastUsedStep !== undefined && e.totpInfo.lastUsedStep >= step) throw authError('INVALID_CODE');
          return { ...e, totpInfo: { ...e.totpInfo, lastUsedStep: step } };
        }),
      }));
    }
    if (request.phoneVerificationInfo !== undefined && request.totpVerificationInfo === undefined) {
      const { sessionInfo, code } = request.phoneVerificationInfo;
      const phoneNumber = await requireSms(this.deps).codes.redeem(caller.realm, sessionInfo, code);
      const enrollment = user.mfaInfo?.find(
        (e) => e.phoneInfo === phoneNumber && (request.mfaEnrollmentId === undefined || e.mfaEnrollmentId === request.mfaEnrollmentId),
      );
      if (!enrollment) throw authError('MFA_ENROLLMENT_NOT_FOUND');
      return this.complete(pending, user, factorClaim(enrollment), (u) => u);
    }
    throw authError('INVALID_ARGUMENT', 'Exactly one of phoneVerificationInfo or totpVerificationInfo is required.');
  }

  /**
   * Hearth's own alternative to a factor: one of the account's recovery codes (recovery-codes.ts).
   * The same call, pending credential and answer as a factor's, so a client that holds the SDK's
   * MultiFactorResolver finishes with it as with any factor (packages/web's recovery assertion).
   * The code's hash leaves the account in the sign-in's own commit: it works once, and of two
   * concurrent uses one loses.
   */
  private async finalizeWithRecoveryCode(caller: Caller, request: FinalizeMfaSignInRequest, pending: PendingSignIn, user: UserRecord): Promise<MfaTokens> {
    const recovery = this.deps.recoveryCodes;
    if (!recovery) throw authError('OPERATION_NOT_ALLOWED', 'Recovery codes are not available on this server.');
    if (request.phoneVerificationInfo !== undefined || request.totpVerificationInfo !== undefined || request.mfaEnrollmentId) {
      throw authError('INVALID_ARGUMENT', 'recoveryCodeVerificationInfo goes alone: without a factor, its verification info or mfaEnrollmentId.');
    }
    const hash = await recovery.check(caller.realm, user, caller.clientIp, request.recoveryCodeVerificationInfo?.recoveryCode);
    let after = user;
    const tokens = await this.complete(pending, user, recoveryCodeFactor, (u) => (after = recovery.consume(u, hash)));
    await recovery.audit(caller, after, 'Signed in with a recovery code', 'mfaSignIn:finalize');
    return tokens;
  }

  private async requireEnabled(caller: Caller): Promise<void> {
    if (!mfaEnabled((await this.deps.auth.projects.config(caller.realm)).mfa)) {
      throw authError('OPERATION_NOT_ALLOWED', 'Multi-factor authentication is not enabled for this project.');
    }
  }

  private async pendingSignIn(caller: Caller, credential: string | undefined, missing: 'MISSING_MFA_PENDING_CREDENTIAL' | 'MISSING_CREDENTIAL'): Promise<{ pending: PendingSignIn; user: UserRecord }> {
    const pending = this.deps.pending.read(caller.realm, credential, missing);
    return { pending, user: this.deps.pending.check(pending, await this.deps.auth.users.get(caller.realm, pending.localId)) };
  }

  /**
   * The session the first factor asked for, now that the second is passed: its ID token names
   * the first factor as sign_in_provider and this one as sign_in_second_factor. The credential is
   * marked used in the same commit, so it starts one session only.
   */
  private async complete(pending: PendingSignIn, user: UserRecord, secondFactor: SecondFactorClaim, change: (u: UserRecord) => UserRecord): Promise<MfaTokens> {
    // The account is checked again inside the commit (change runs on the stored record), so a concurrent use of the credential loses.
    const { tokens } = await this.deps.sessions.completeSignIn(pending.projectId, user, pending.provider, {
      ...(pending.developerClaims ? { developerClaims: pending.developerClaims } : {}),
      secondFactor,
      change: (u) => {
        const current = this.deps.pending.check(pending, u);
        return { ...change(current), usedMfaPendingCredentials: this.deps.pending.markUsed(current, pending) };
      },
    });
    return { idToken: tokens.idToken, refreshToken: tokens.refreshToken };
  }
}

function factorClaim(enrollment: MfaEnrollmentRecord): SecondFactorClaim {
  return { factorId: factorIdOf(enrollment), enrollmentId: enrollment.mfaEnrollmentId };
}

function findEnrollment(user: UserRecord, id: string | undefined): MfaEnrollmentRecord {
  if (!id) throw authError('MISSING_MFA_ENROLLMENT_ID', 'No second factor identifier is provided.');
  const enrollment = user.mfaInfo?.find((e) => e.mfaEnrollmentId === id);
  if (!enrollment) throw authError('MFA_ENROLLMENT_NOT_FOUND');
  return enrollment;
}
