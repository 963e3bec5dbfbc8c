import { askBeforeSend, vetNewAccount } from '../core/blocking-functions.js';
import type { UserRecord } from '../../storage/store.js';
import { admitSignUp, authenticate, type AuthDeps, type Authenticated } from '../core/auth-context.js';
import type { Caller } from '../core/requests.js';
import type { SessionService, SignInResult } from '../core/sessions.js';
import { secondFactorOf } from '../core/tokens.js';
import { newSignedInAccount } from '../core/user-repository.js';
import type { HumanCheck } from '../core/verification.js';
import { authError } from '../errors.js';
import type { SmsCodes } from './codes.js';
import { requirePhoneNumber } from './numbers.js';
import { projectOf } from '../tenants/realm.js';

/** accounts:sendVerificationCode (v3 relyingparty/sendVerificationCode). */
export interface SendVerificationCodeRequest {
  phoneNumber?: string;
  /** The reCAPTCHA v2 token (Hearth's stand-in's) the SDK's ApplicationVerifier produced. */
  recaptchaToken?: string;
}

/** What accounts:signInWithPhoneNumber's `operation` can say; the SDK sends REAUTH for reauthentication. */
export type PhoneOperation = 'VERIFY_OP_UNSPECIFIED' | 'SIGN_UP_OR_IN' | 'REAUTH' | 'UPDATE' | 'LINK';

/** accounts:signInWithPhoneNumber (v3 relyingparty/verifyPhoneNumber). */
export interface SignInWithPhoneNumberRequest {
  sessionInfo?: string;
  code?: string;
  /** Instead of sessionInfo and code: the proof handed back earlier, with its number. */
  temporaryProof?: string;
  phoneNumber?: string;
  /** Link (or update) the number on this account. */
  idToken?: string;
  operation?: PhoneOperation;
}

export type PhoneSignInResult =
  | { kind: 'session'; user: UserRecord; tokens: SignInResult['tokens']; isNewUser: boolean; phoneNumber: string }
  /** The number is verified but belongs to another account: the SDK offers to sign in there with the proof. */
  | { kind: 'proof'; phoneNumber: string; temporaryProof: string; temporaryProofExpiresIn: string };

/**
 * Phone sign-in over SMS codes: sign in or sign up, link or update the number of a signed-in
 * account (the SDK sends both as signInWithPhoneNumber with an ID token: the account's number is
 * set, replacing any), and reauthenticate (REAUTH: the number must already have an account).
 */
export class PhoneSignIn {
  constructor(
    private readonly deps: AuthDeps,
    private readonly sessions: SessionService,
    private readonly codes: SmsCodes,
    private readonly humans: HumanCheck,
  ) {}

  async sendVerificationCode(caller: Caller, request: SendVerificationCodeRequest): Promise<string> {
    // Google answers INVALID_PHONE_NUMBER for a missing number too; checked before the token is spent.
    const phoneNumber = requirePhoneNumber(request.phoneNumber);
    await this.requireEnabled(caller);
    this.codes.requireDelivery();
    // reCAPTCHA tokens belong to the project (its site key), whichever of its tenants signs in.
    await this.humans.verify(projectOf(caller.realm), request.recaptchaToken);
    await askBeforeSend(this.deps.blocking, { eventType: 'beforeSendSms', realm: caller.realm, phoneNumber, smsType: 'SIGN_IN_OR_SIGN_UP', ipAddress: caller.clientIp });
    return this.codes.send(caller.realm, phoneNumber, caller.clientIp);
  }

  async signIn(caller: Caller, request: SignInWithPhoneNumberRequest): Promise<PhoneSignInResult> {
    await this.requireEnabled(caller);
    // The account is checked before the code is used, so a stale token does not burn the code.
    const owner = request.idToken !== undefined ? await authenticate(this.deps, caller, request.idToken) : undefined;
    const viaProof = request.temporaryProof !== undefined;
    const phoneNumber = viaProof
      ? await this.codes.redeemProof(caller.realm, request.temporaryProof!, request.phoneNumber)
      : await this.codes.redeem(caller.realm, request.sessionInfo, request.code);
    const holder = await this.deps.users.getByPhone(caller.realm, phoneNumber);
    if (owner) return this.setNumber(caller, owner, phoneNumber, holder, viaProof);
    if (holder) return this.signInExisting(caller.realm, holder, phoneNumber);
    // Reauthentication never creates an account (the SDK shows auth/user-not-found).
    if (request.operation === 'REAUTH') throw authError('USER_NOT_FOUND');
    // A first sign-in with a number creates the account: it counts toward the sign-up limit
    // (unless a concurrent request made it first and this one signed in to it).
    return admitSignUp(this.deps, caller, () => this.signUp(caller.realm, phoneNumber), (result) => result.kind === 'session' && result.isNewUser);
  }

  private async requireEnabled(caller: Caller): Promise<void> {
    if (caller.isAdmin) return;
    if (!(await this.deps.projects.config(caller.realm)).signIn.phoneNumber.enabled) throw authError('OPERATION_NOT_ALLOWED');
  }

  private async signInExisting(projectId: string, account: UserRecord, phoneNumber: string): Promise<PhoneSignInResult> {
    if (account.disabled) throw authError('USER_DISABLED');
    const { user, tokens } = await this.sessions.startSession(projectId, account, 'phone');
    return { kind: 'session', user, tokens, isNewUser: false, phoneNumber };
  }

  private async signUp(projectId: string, phoneNumber: string): Promise<PhoneSignInResult> {
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const vetted = await vetNewAccount(this.deps.blocking, { realm: projectId, signInMethod: 'phone' }, newSignedInAccount(now, { phoneNumber }));
    const account = vetted.user;
    const refresh = this.deps.tokens.newRefreshToken(projectId, account, authTime, 'phone', vetted.developerClaims);
    let user: UserRecord;
    try {
      user = await this.deps.users.insert(projectId, account, [refresh.mutation]);
    } catch (error) {
      // The same number signed up by a concurrent request: that account is the one to sign in to.
      const holder = await this.deps.users.getByPhone(projectId, phoneNumber);
      if (holder) return this.signInExisting(projectId, holder, phoneNumber);
      throw error;
    }
    const tokens = await this.sessions.tokensFor(projectId, user, authTime, 'phone', refresh.token, vetted.developerClaims);
    return { kind: 'session', user, tokens, isNewUser: true, phoneNumber };
  }

  /** linkWithPhoneNumber and updatePhoneNumber: the signed-in account takes the verified number. */
  private async setNumber(caller: Caller, owner: Authenticated, phoneNumber: string, holder: UserRecord | undefined, viaProof: boolean): Promise<PhoneSignInResult> {
    if (holder && holder.localId !== owner.user.localId) {
      // The code was good, so say so with a proof (the SDK's auth/account-exists-with-different-credential
      // carries it); a proof brought back to link it here again is refused.
      if (viaProof) throw authError('PHONE_NUMBER_EXISTS');
      const { proof, expiresInSeconds } = await this.codes.issueProof(caller.realm, phoneNumber);
      return { kind: 'proof', phoneNumber, temporaryProof: proof, temporaryProofExpiresIn: String(expiresInSeconds) };
    }
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    // The signed-in session goes on, still naming the second factor it passed.
    const secondFactor = secondFactorOf(owner.claims);
    const refresh = this.deps.tokens.newRefreshToken(caller.realm, owner.user, authTime, 'phone', undefined, secondFactor);
    const user = await this.deps.users.update(
      caller.realm,
      owner.user.localId,
      (current) => ({ ...current, phoneNumber, lastLoginAt: now }),
      () => [refresh.mutation],
    );
    const tokens = await this.sessions.tokensFor(caller.realm, user, authTime, 'phone', refresh.token, undefined, secondFactor);
    return { kind: 'session', user, tokens, isNewUser: false, phoneNumber };
  }
}
