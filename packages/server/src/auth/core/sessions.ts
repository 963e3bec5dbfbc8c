import { applyBlockingAnswer, askBlocking, withSessionClaims, type BlockingAnswer } from './blocking-functions.js';
import type { Mutation, SecondFactorClaim, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import { enrollmentsFromAdmin } from '../mfa/enrollments.js';
import type { SecondFactorRequired } from '../mfa/gate.js';
import { requirePhoneNumber } from '../phone/numbers.js';
import { authenticate, guardEmailReplacement, requireAdmin, type AuthDeps } from './auth-context.js';
import { enforcePasswordPolicy, unmetRequirements } from './password-policy.js';
import { hashPassword, needsRehash, verifyAgainstDecoy, verifyPassword } from './passwords.js';
import type { Caller, RefreshRequest, SignInWithPasswordRequest, SignUpRequest } from './requests.js';
import { signInLimits, SignInThrottle } from './throttle.js';
import { hashRefreshToken, idTokenLifetimeSeconds, secondFactorOf, type SignInProvider } from './tokens.js';
import { newLocalId } from './user-repository.js';
import { projectOf, tenantOf } from '../tenants/realm.js';
import { checkDisplayName, checkLocalId, checkPhotoUrl, requireEmail, requireNewPassword } from './validation.js';

export interface SessionTokens {
  idToken: string;
  refreshToken: string;
  expiresIn: string;
}

export interface SignUpResult {
  user: UserRecord;
  tokens?: SessionTokens;
}

/** A sign-in's answer: a session's tokens, or (the account has second factors) a request for one. */
export interface SignInResult {
  user: UserRecord;
  tokens: SessionTokens | SecondFactorRequired;
}

/** What a sign-in of an existing account does besides starting the session, in the same commit. */
export interface SessionStart {
  /** Changes to the account (a provider's profile, a re-hashed password, a verified email, ...). */
  change?: (user: UserRecord) => UserRecord;
  /** Other writes (the action code the sign-in uses, ...). */
  alongside?: Mutation[];
  /** A custom token's claims, carried into every ID token of the session. */
  developerClaims?: string;
  /** The second factor passed (multi-factor sign-in), named in every ID token of the session. */
  secondFactor?: SecondFactorClaim;
}

export interface RefreshResult {
  /** The project the session's tokens name (its realm may be one of the project's tenants). */
  projectId: string;
  user: UserRecord;
  idToken: string;
  refreshToken: string;
  expiresIn: string;
}

/** Creating sessions: sign-up (email, anonymous, linking), password sign-in, token refresh. */
export class SessionService {
  private readonly signIns: SignInThrottle;

  constructor(private readonly deps: AuthDeps) {
    this.signIns = deps.signInThrottle ?? SignInThrottle.inMemory(signInLimits(deps.accountThrottle.limits.maxFailures, deps.accountThrottle.limits.windowMs));
  }

  async signUp(caller: Caller, request: SignUpRequest): Promise<SignUpResult> {
    const adminFields =
      request.localId !== undefined || request.emailVerified !== undefined || request.disabled !== undefined || request.phoneNumber !== undefined || request.mfaInfo !== undefined;
    if (adminFields) requireAdmin(caller);
    if (request.idToken) return this.linkPassword(caller, request);

    const config = await this.deps.projects.config(caller.realm);
    const withEmail = request.email !== undefined || request.password !== undefined;
    if (!caller.isAdmin) {
      if (withEmail && !config.signIn.email.enabled) throw authError('OPERATION_NOT_ALLOWED');
      if (!withEmail && !config.signIn.anonymous.enabled) throw authError('OPERATION_NOT_ALLOWED');
    }
    const email = request.email !== undefined || !caller.isAdmin && withEmail ? requireEmail(request.email) : undefined;
    const password = request.password !== undefined || !caller.isAdmin && withEmail ? requireNewPassword(request.password) : undefined;
    if (password !== undefined && !caller.isAdmin) enforcePasswordPolicy(config.passwordPolicyConfig, password);
    const now = Date.now();
    const user: UserRecord = {
      localId: request.localId !== undefined ? checkLocalId(request.localId) : newLocalId(),
      emailVerified: request.emailVerified ?? false,
      providerUserInfo: [],
      disabled: request.disabled ?? false,
      createdAt: now,
      validSince: Math.floor(now / 1000),
      version: 1,
    };
    if (email) user.email = email;
    if (password) {
      user.passwordHash = await hashPassword(password);
      user.passwordUpdatedAt = now;
    }
    if (request.displayName !== undefined) user.displayName = checkDisplayName(request.displayName);
    if (request.photoUrl !== undefined) user.photoUrl = checkPhotoUrl(request.photoUrl);
    if (request.phoneNumber !== undefined) user.phoneNumber = requirePhoneNumber(request.phoneNumber);
    if (request.mfaInfo?.length) user.mfaInfo = enrollmentsFromAdmin(request.mfaInfo, [], now);

    const wantsTokens = !caller.isAdmin || request.returnSecureToken === true;
    if (!wantsTokens) return { user: await this.deps.users.insert(caller.realm, user) };
    user.lastLoginAt = now;
    const provider: SignInProvider = email ? 'password' : 'anonymous';
    // A client's sign-up asks the blocking functions (beforeCreate, then beforeSignIn), as Google does; an administrator's does not.
    const blockingEvent = { realm: caller.realm, signInMethod: provider, ipAddress: caller.clientIp, ...(caller.languageCode ? { locale: caller.languageCode } : {}) };
    let created = user;
    let sessionAnswer: BlockingAnswer | undefined;
    if (!caller.isAdmin) {
      created = applyBlockingAnswer(user, await askBlocking(this.deps.blocking, { ...blockingEvent, eventType: 'beforeCreate', user }));
      sessionAnswer = await askBlocking(this.deps.blocking, { ...blockingEvent, eventType: 'beforeSignIn', user: created });
      created = applyBlockingAnswer(created, sessionAnswer);
    }
    const developerClaims = withSessionClaims(undefined, sessionAnswer);
    const authTime = Math.floor(now / 1000);
    const refresh = this.deps.tokens.newRefreshToken(caller.realm, created, authTime, provider, developerClaims);
    const stored = await this.deps.users.insert(caller.realm, created, created.disabled ? [] : [refresh.mutation]);
    if (stored.disabled && !caller.isAdmin) throw authError('USER_DISABLED');
    return { user: stored, tokens: await this.tokensFor(caller.realm, stored, authTime, provider, refresh.token, developerClaims) };
  }

  /** signUp with an idToken: give the signed-in (often anonymous) user an email and password. */
  private async linkPassword(caller: Caller, request: SignUpRequest): Promise<SignUpResult> {
    const { user: current, claims } = await authenticate(this.deps, caller, request.idToken);
    const config = await this.deps.projects.config(caller.realm);
    if (!config.signIn.email.enabled && !caller.isAdmin) throw authError('OPERATION_NOT_ALLOWED');
    const email = requireEmail(request.email);
    const password = requireNewPassword(request.password);
    if (!caller.isAdmin) enforcePasswordPolicy(config.passwordPolicyConfig, password);
    if (current.passwordHash) throw authError('EMAIL_EXISTS', 'The user already has a password credential');
    const replacesEmail = guardEmailReplacement(this.deps, claims, current, email);
    const passwordHash = await hashPassword(password);
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    // Linking keeps the session's second factor: the caller passed it when signing in.
    const secondFactor = secondFactorOf(claims);
    const refresh = this.deps.tokens.newRefreshToken(caller.realm, current, authTime, 'password', undefined, secondFactor);
    const user = await this.deps.users.update(
      caller.realm,
      current.localId,
      (u) => {
        const next: UserRecord = { ...u, email, passwordHash, passwordUpdatedAt: now, emailVerified: false, lastLoginAt: now };
        if (request.displayName !== undefined) next.displayName = checkDisplayName(request.displayName);
        return next;
      },
      () => [refresh.mutation],
    );
    if (replacesEmail) this.deps.onEmailChanged(caller, user, current.email!);
    return { user, tokens: await this.tokensFor(caller.realm, user, authTime, 'password', refresh.token, undefined, secondFactor) };
  }

  async signInWithPassword(caller: Caller, request: SignInWithPasswordRequest): Promise<SignInResult> {
    const email = requireEmail(request.email);
    if (request.password === undefined || request.password === '') throw authError('MISSING_PASSWORD');
    const config = await this.deps.projects.config(caller.realm);
    if (!config.signIn.email.enabled) throw authError('PASSWORD_LOGIN_DISABLED');
    // Counted before the slow check, so concurrent guesses cannot all slip under the limit.
    await this.signIns.refresh(caller.realm, email, caller.clientIp);
    if (!this.signIns.admit(caller.realm, email, caller.clientIp)) throw authError('TOO_MANY_ATTEMPTS_TRY_LATER');
    const privacy = config.emailPrivacyConfig.enableImprovedEmailPrivacy;
    const found = await this.deps.users.getByEmail(caller.realm, email);
    const passwordOk = found?.passwordHash
      ? await verifyPassword(request.password, found.passwordHash)
      : await verifyAgainstDecoy(request.password);
    if (!found || !passwordOk) {
      if (privacy) throw authError('INVALID_LOGIN_CREDENTIALS');
      throw authError(found ? 'INVALID_PASSWORD' : 'EMAIL_NOT_FOUND');
    }
    if (found.disabled) throw authError('USER_DISABLED');
    this.signIns.succeeded(caller.realm, email, caller.clientIp);
    const policy = config.passwordPolicyConfig;
    if (policy.passwordPolicyEnforcementState === 'ENFORCE' && policy.forceUpgradeOnSignin && unmetRequirements(policy, request.password).length) {
      enforcePasswordPolicy(policy, request.password);
    }
    // An imported (or older) hash that matched is replaced by Hearth's scrypt in the sign-in's own commit.
    const rehash = needsRehash(found.passwordHash!) ? { from: found.passwordHash!, to: await hashPassword(request.password) } : undefined;
    // Only the hash that was checked is replaced: a password changed meanwhile stays.
    const change = rehash ? (u: UserRecord) => (u.passwordHash === rehash.from ? { ...u, passwordHash: rehash.to } : u) : undefined;
    return this.startSession(caller.realm, found, 'password', change ? { change } : {});
  }

  /**
   * Every first-factor sign-in of an existing account comes here. An account with second factors
   * gets a pending credential instead of a session (what the first factor changes is kept); the
   * others get a session at once.
   */
  async startSession(projectId: string, account: UserRecord, provider: SignInProvider, start: SessionStart = {}): Promise<SignInResult> {
    const required = await this.deps.secondFactors?.challenge(projectId, account, provider, start.developerClaims);
    if (!required) return this.completeSignIn(projectId, account, provider, start);
    const changes = start.change !== undefined || (start.alongside?.length ?? 0) > 0;
    const user = changes ? await this.deps.users.update(projectId, account.localId, start.change ?? ((u) => u), () => start.alongside ?? []) : account;
    return { user, tokens: required };
  }

  /** Records a sign-in and issues its ID token and refresh token (the multi-factor finalize ends here too). */
  async completeSignIn(projectId: string, account: UserRecord, provider: SignInProvider, start: SessionStart = {}): Promise<{ user: UserRecord; tokens: SessionTokens }> {
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const { secondFactor } = start;
    const answer = await askBlocking(this.deps.blocking, { eventType: 'beforeSignIn', realm: projectId, user: account, signInMethod: provider });
    const developerClaims = withSessionClaims(start.developerClaims, answer);
    const refresh = this.deps.tokens.newRefreshToken(projectId, account, authTime, provider, developerClaims, secondFactor);
    const user = await this.deps.users.update(
      projectId,
      account.localId,
      (u) => applyBlockingAnswer({ ...(start.change ? start.change(u) : u), lastLoginAt: now }, answer),
      (updated) => [...(updated.disabled ? [] : [refresh.mutation]), ...(start.alongside ?? [])],
    );
    // A blocking function may disable the account it is asked about: the sign-in ends there.
    if (user.disabled) throw authError('USER_DISABLED');
    return { user, tokens: await this.tokensFor(projectId, user, authTime, provider, refresh.token, developerClaims, secondFactor) };
  }

  async refresh(request: RefreshRequest): Promise<RefreshResult> {
    if (!request.grant_type) throw authError('MISSING_GRANT_TYPE');
    if (request.grant_type !== 'refresh_token') throw authError('INVALID_GRANT_TYPE');
    if (!request.refresh_token) throw authError('MISSING_REFRESH_TOKEN');
    const tokenHash = hashRefreshToken(request.refresh_token);
    const found = await this.deps.tokens.findRefreshToken(tokenHash);
    if (!found) throw authError('INVALID_REFRESH_TOKEN');
    const { token: record, user } = found;
    // A session stays in its realm: asked for in another tenant, it is refused, as Google's emulator does.
    if (request.tenantId && request.tenantId !== tenantOf(record.projectId)) throw authError('TENANT_ID_MISMATCH');
    // A tenant with disableAuth signs nobody in, and keeps nobody signed in.
    if (this.deps.projects.tenant(record.projectId)?.disableAuth) throw authError('PROJECT_DISABLED');
    // A dead token answers once with the reason (the SDK signs its user out on these codes), then is dropped.
    if (!user || user.createdAt !== record.userCreatedAt) {
      await this.deps.tokens.forgetRefreshToken(tokenHash);
      throw authError('USER_NOT_FOUND');
    }
    if (record.issuedAt < user.validSince) {
      await this.deps.tokens.forgetRefreshToken(tokenHash);
      throw authError('TOKEN_EXPIRED');
    }
    if (user.disabled) throw authError('USER_DISABLED');
    const idToken = await this.deps.tokens.signIdToken(record.projectId, user, record.authTime, record.signInProvider, record.developerClaims, record.secondFactor);
    return { projectId: projectOf(record.projectId), user, idToken, refreshToken: request.refresh_token, expiresIn: String(idTokenLifetimeSeconds) };
  }

  async tokensFor(
    projectId: string,
    user: UserRecord,
    authTime: number,
    provider: SignInProvider,
    refreshToken: string,
    developerClaims?: string,
    secondFactor?: SecondFactorClaim,
  ): Promise<SessionTokens> {
    const idToken = await this.deps.tokens.signIdToken(projectId, user, authTime, provider, developerClaims, secondFactor);
    return { idToken, refreshToken, expiresIn: String(idTokenLifetimeSeconds) };
  }
}
