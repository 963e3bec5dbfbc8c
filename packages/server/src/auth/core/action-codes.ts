import { vetNewAccount } from './blocking-functions.js';
import type { OobRequestType, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { ActionMailer } from './action-mail.js';
import { admitSignUp, authenticate, guardEmailReplacement, type AuthDeps } from './auth-context.js';
import type { OobCodes } from './oob-codes.js';
import { hashPassword } from './passwords.js';
import { enforcePasswordPolicy } from './password-policy.js';
import type { Caller, EmailLinkSignInRequest, ResetPasswordRequest } from './requests.js';
import type { SessionService, SignInResult } from './sessions.js';
import { secondFactorOf } from './tokens.js';
import { newSignedInAccount } from './user-repository.js';
import { requireEmail, requireNewPassword } from './validation.js';

export interface CodeInfo {
  requestType: OobRequestType;
  email: string;
  newEmail?: string;
}

export interface EmailLinkResult {
  user: UserRecord;
  tokens: SignInResult['tokens'];
  isNewUser: boolean;
}

/** Using action codes: check one, reset a password, apply a verification or change, sign in by link. */
export class ActionCodeService {
  constructor(
    private readonly deps: AuthDeps,
    private readonly codes: OobCodes,
    private readonly sessions: SessionService,
    private readonly mailer: ActionMailer,
  ) {}

  /** resetPassword with only an oobCode: what the code is for, without using it (checkActionCode). */
  async inspect(caller: Caller, oobCode: string | undefined): Promise<CodeInfo> {
    const { record } = await this.codes.find(caller.realm, oobCode);
    // For a recovery, `email` is the address being restored and `newEmail` the one it replaces.
    const info: CodeInfo = { requestType: record.requestType, email: record.email };
    if (record.newEmail !== undefined) info.newEmail = record.newEmail;
    return info;
  }

  async resetPassword(caller: Caller, request: ResetPasswordRequest): Promise<CodeInfo> {
    if (request.newPassword === undefined) return this.inspect(caller, request.oobCode);
    const { record, user } = await this.codes.find(caller.realm, request.oobCode);
    if (record.requestType !== 'PASSWORD_RESET' || !user) throw authError('INVALID_OOB_CODE');
    if (user.disabled) throw authError('USER_DISABLED');
    const newPassword = requireNewPassword(request.newPassword);
    enforcePasswordPolicy((await this.deps.projects.config(caller.realm)).passwordPolicyConfig, newPassword);
    const passwordHash = await hashPassword(newPassword);
    const now = Date.now();
    await this.deps.users.update(
      caller.realm,
      user.localId,
      // Following the mailed link proves the address; the reset signs out every session.
      (u) => ({ ...u, passwordHash, passwordUpdatedAt: now, emailVerified: true, validSince: Math.floor(now / 1000) }),
      () => [this.codes.consume(record)],
    );
    return { requestType: 'PASSWORD_RESET', email: record.email };
  }

  /** accounts:update with an oobCode (applyActionCode): verify an email, change it, or undo a change. */
  async apply(caller: Caller, oobCode: string): Promise<UserRecord> {
    const { record, user } = await this.codes.find(caller.realm, oobCode);
    if (!user) throw authError('INVALID_OOB_CODE');
    if (user.disabled) throw authError('USER_DISABLED');
    const now = Date.now();
    const consume = () => [this.codes.consume(record)];
    switch (record.requestType) {
      case 'VERIFY_EMAIL':
        return this.deps.users.update(caller.realm, user.localId, (u) => ({ ...u, emailVerified: true }), consume);
      case 'VERIFY_AND_CHANGE_EMAIL': {
        const newEmail = record.newEmail!;
        const recovery = user.email
          ? this.mailer.prepareRecoveryWithMail(caller, user, user.email, newEmail, await this.deps.projects.config(caller.realm))
          : undefined;
        const changed = await this.deps.users.update(
          caller.realm,
          user.localId,
          (u) => ({ ...u, email: newEmail, emailVerified: true, validSince: Math.floor(now / 1000) }),
          () => [...consume(), ...(recovery ? recovery.mutations : [])],
        );
        recovery?.committed();
        return changed;
      }
      case 'RECOVER_EMAIL':
        return this.deps.users.update(
          caller.realm,
          user.localId,
          (u) => ({ ...u, email: record.email, emailVerified: true, validSince: Math.floor(now / 1000) }),
          consume,
        );
      default:
        throw authError('INVALID_OOB_CODE');
    }
  }

  /** signInWithEmailLink / emailLinkSignin: sign in, sign up, or (with an ID token) link the address. */
  async signInWithEmailLink(caller: Caller, request: EmailLinkSignInRequest): Promise<EmailLinkResult> {
    const email = requireEmail(request.email);
    const { record } = await this.codes.find(caller.realm, request.oobCode);
    if (record.requestType !== 'EMAIL_SIGNIN') throw authError('INVALID_OOB_CODE');
    if (record.email !== email) throw authError('INVALID_EMAIL', 'The email provided does not match the sign-in email address.');
    const config = await this.deps.projects.config(caller.realm);
    if (config.signIn.email.passwordRequired || !config.signIn.email.enabled) throw authError('OPERATION_NOT_ALLOWED');
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const verified = (u: UserRecord): UserRecord => ({ ...u, email, emailVerified: true, emailLinkSignin: true });

    if (request.idToken !== undefined) {
      // Linking the address to the signed-in account: its session goes on (with its second factor).
      const { user: current, claims } = await authenticate(this.deps, caller, request.idToken);
      const owner = await this.deps.users.getByEmail(caller.realm, email);
      if (owner && owner.localId !== current.localId) throw authError('EMAIL_EXISTS');
      const replacedEmail = guardEmailReplacement(this.deps, claims, current, email) ? current.email : undefined;
      const secondFactor = secondFactorOf(claims);
      const refresh = this.deps.tokens.newRefreshToken(caller.realm, current, authTime, 'password', undefined, secondFactor);
      const change = (u: UserRecord) => ({ ...verified(u), lastLoginAt: now });
      const user = await this.deps.users.update(caller.realm, current.localId, change, () => [this.codes.consume(record), refresh.mutation]);
      if (replacedEmail) this.deps.onEmailChanged(caller, user, replacedEmail);
      return { user, tokens: await this.sessions.tokensFor(caller.realm, user, authTime, 'password', refresh.token, undefined, secondFactor), isNewUser: false };
    }

    const account = await this.deps.users.getByEmail(caller.realm, email);
    if (account?.disabled) throw authError('USER_DISABLED');
    if (account) {
      const { user, tokens } = await this.sessions.startSession(caller.realm, account, 'password', { change: verified, alongside: [this.codes.consume(record)] });
      return { user, tokens, isNewUser: false };
    }
    // A first sign-in by link creates the account: it counts toward the sign-up limit like accounts:signUp.
    return admitSignUp(this.deps, caller, async () => {
      const vetted = await vetNewAccount(this.deps.blocking, { realm: caller.realm, signInMethod: 'emailLink', ipAddress: caller.clientIp }, verified(newSignedInAccount(now, { emailVerified: true })));
      const refresh = this.deps.tokens.newRefreshToken(caller.realm, vetted.user, authTime, 'password', vetted.developerClaims);
      const user = await this.deps.users.insert(caller.realm, vetted.user, [this.codes.consume(record), refresh.mutation]);
      return { user, tokens: await this.sessions.tokensFor(caller.realm, user, authTime, 'password', refresh.token, vetted.developerClaims), isNewUser: true };
    });
  }
}
