import type { UserRecord } from '../../storage/store.js';
import type { ProjectDirectory } from '../core/project-config.js';
import { authError } from '../errors.js';
import { enrollmentsForWire, type MfaEnrollmentWire } from './enrollments.js';
import { mfaEnabled } from './mfa-config.js';
import type { PendingCredentials } from './pending-credentials.js';

/**
 * What a first-factor sign-in answers, instead of tokens, for an account with second factors: the
 * SDK sees `mfaPendingCredential`, raises auth/multi-factor-auth-required, and its
 * MultiFactorResolver finishes with mfaSignIn:finalize.
 */
export interface SecondFactorRequired {
  mfaPendingCredential: string;
  mfaInfo: MfaEnrollmentWire[];
}

/** The one check every first-factor sign-in of an existing account passes (SessionService.startSession). */
export interface SecondFactorGate {
  /** undefined: the sign-in completes now; otherwise the answer asking for a second factor. */
  challenge(projectId: string, account: UserRecord, provider: string, developerClaims?: string): Promise<SecondFactorRequired | undefined>;
}

export class MfaGate implements SecondFactorGate {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly pending: PendingCredentials,
  ) {}

  async challenge(projectId: string, account: UserRecord, provider: string, developerClaims?: string): Promise<SecondFactorRequired | undefined> {
    if (!account.mfaInfo?.length) return undefined;
    // A custom token is the app's own server vouching for the user, as Google treats it: no second
    // factor is asked (the SDK's signInWithCustomToken could not resolve one: it has no MultiFactorResolver).
    if (provider === 'custom') return undefined;
    // With MFA switched off for the project, enrolled factors are kept but not asked for, as Google does.
    if (!mfaEnabled((await this.projects.config(projectId)).mfa)) return undefined;
    // A phone number is not a first factor for an account whose second factor may be that same phone.
    if (provider === 'phone') throw authError('UNSUPPORTED_FIRST_FACTOR', 'A phone number cannot be set as a first factor on an SMS based MFA user.');
    return {
      mfaPendingCredential: this.pending.issue(projectId, account, provider, developerClaims),
      mfaInfo: enrollmentsForWire(account.mfaInfo, { obfuscatePhone: true }),
    };
  }
}
