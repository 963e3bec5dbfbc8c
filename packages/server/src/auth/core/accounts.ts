import type { SecondFactorClaim, UserRecord } from '../../storage/store.js';
import { requestErrors } from '../../http/api-error.js';
import { authError } from '../errors.js';
import { phoneLookupKey, requirePhoneNumber } from '../phone/numbers.js';
import { signInMethods } from './account-view.js';
import { authenticate, requireAdmin, requireRecentLogin, type AuthDeps } from './auth-context.js';
import { guardOperatorAccount, guardOperatorClaim } from './operator-claim.js';
import { hashPassword } from './passwords.js';
import type { Caller, CreateAuthUriRequest, DeleteRequest, LookupRequest, UpdateRequest } from './requests.js';
import type { SessionService, SessionTokens } from './sessions.js';
import { enrollmentsFromAdmin } from '../mfa/enrollments.js';
import { passkeysWithout } from '../passkeys/passkeys.js';
import { reservedClaims, secondFactorOf } from './tokens.js';
import { checkDisplayName, checkLocalId, checkPhotoUrl, isValidEmail, normalizeEmail, requireEmail, requireNewPassword } from './validation.js';

const maxClaimsLength = 1000;

export interface UpdateResult {
  user: UserRecord;
  tokens?: SessionTokens;
}

export interface CreateAuthUriResult {
  registered?: boolean;
  signinMethods?: string[];
  allProviders?: string[];
  sessionId: string;
}

/** Reading, changing and deleting accounts, by their owner (ID token) or an administrator. */
export class AccountService {
  constructor(
    private readonly deps: AuthDeps,
    private readonly sessions: SessionService,
  ) {}

  async lookup(caller: Caller, request: LookupRequest): Promise<UserRecord[]> {
    if (request.idToken !== undefined && !caller.isAdmin) return [(await authenticate(this.deps, caller, request.idToken)).user];
    const byIdentifier = request.localId?.length || request.email?.length || request.phoneNumber?.length;
    if (!byIdentifier) {
      if (request.idToken === undefined) throw authError(caller.isAdmin ? 'MISSING_LOCAL_ID' : 'MISSING_ID_TOKEN');
      const claims = await this.deps.tokens.verifyIdToken(caller.realm, request.idToken);
      const user = await this.deps.users.get(caller.realm, claims.sub);
      return user ? [user] : [];
    }
    requireAdmin(caller);
    const found = new Map<string, UserRecord>();
    const { users } = this.deps;
    for (const id of request.localId ?? []) add(found, await users.get(caller.realm, id));
    for (const email of request.email ?? []) add(found, await users.getByEmail(caller.realm, normalizeEmail(email)));
    for (const phone of request.phoneNumber ?? []) add(found, await users.getByPhone(caller.realm, phoneLookupKey(phone)));
    return [...found.values()];
  }

  async update(caller: Caller, request: UpdateRequest): Promise<UpdateResult> {
    const adminFields =
      request.emailVerified !== undefined ||
      request.disableUser !== undefined ||
      request.customAttributes !== undefined ||
      request.validSince !== undefined ||
      request.phoneNumber !== undefined ||
      request.mfa !== undefined ||
      (request.localId !== undefined && request.idToken === undefined);
    if (adminFields) requireAdmin(caller);
    if (request.oobCode !== undefined) throw authError('INVALID_OOB_CODE'); // applied by ActionCodeService

    let localId: string;
    let signInProvider = 'password';
    let secondFactor: SecondFactorClaim | undefined;
    let owner: UserRecord | undefined;
    if (request.idToken !== undefined) {
      const { claims, user: current } = await authenticate(this.deps, caller, request.idToken);
      owner = current;
      // Removing a passkey is sensitive too: a borrowed session must not strip the owner's way back in.
      const sensitive = request.email !== undefined || request.password !== undefined || (request.deletePasskey?.length ?? 0) > 0;
      if (sensitive && !caller.isAdmin && claims.firebase.sign_in_provider !== 'anonymous') requireRecentLogin(this.deps, claims);
      localId = claims.sub;
      signInProvider = claims.firebase.sign_in_provider;
      secondFactor = secondFactorOf(claims);
    } else if (request.localId !== undefined) {
      localId = checkLocalId(request.localId);
    } else {
      throw authError(caller.isAdmin ? 'MISSING_LOCAL_ID' : 'MISSING_ID_TOKEN');
    }

    const email = request.email !== undefined ? requireEmail(request.email) : undefined;
    if (email !== undefined && !caller.isAdmin && (await this.deps.projects.config(caller.realm)).emailPrivacyConfig.enableImprovedEmailPrivacy) {
      // As Identity Platform does: a direct change would say whether the address is taken.
      throw authError('OPERATION_NOT_ALLOWED', 'Please verify the new email before changing email.');
    }
    const passwordHash = request.password !== undefined ? await hashPassword(requireNewPassword(request.password)) : undefined;
    const customAttributes = request.customAttributes !== undefined ? checkClaims(request.customAttributes) : undefined;
    const validSince = request.validSince !== undefined ? Number(request.validSince) : undefined;
    if (validSince !== undefined && !Number.isSafeInteger(validSince)) throw requestErrors.invalidArgument('validSince must be whole seconds since the epoch.');
    const displayName = request.displayName !== undefined ? checkDisplayName(request.displayName) : undefined;
    const phoneNumber = request.phoneNumber !== undefined ? requirePhoneNumber(request.phoneNumber) : undefined;
    const photoUrl = request.photoUrl ? checkPhotoUrl(request.photoUrl) : undefined;
    const now = Date.now();
    const revokes = passwordHash !== undefined || validSince !== undefined;
    const issuesTokens = owner !== undefined && !caller.isAdmin && (request.returnSecureToken === true || email !== undefined || passwordHash !== undefined);
    // The owner's session goes on with fresh tokens, still naming the second factor it passed.
    const refresh = issuesTokens ? this.deps.tokens.newRefreshToken(caller.realm, owner!, Math.floor(now / 1000), signInProvider, undefined, secondFactor) : undefined;

    let previousEmail: string | undefined;
    const user = await this.deps.users.update(
      caller.realm,
      localId,
      (current) => {
        // An administrator other than the owner (a service account) leaves operator accounts alone.
        if (caller.isAdmin) guardOperatorAccount(caller, current);
        previousEmail = current.email;
        const next: UserRecord = { ...current, providerUserInfo: [...current.providerUserInfo] };
        if (email !== undefined && email !== current.email) {
          next.email = email;
          next.emailVerified = false;
        }
        if (passwordHash !== undefined) {
          next.passwordHash = passwordHash;
          next.passwordUpdatedAt = now;
        }
        if (displayName !== undefined) next.displayName = displayName;
        if (request.photoUrl !== undefined) {
          if (photoUrl) next.photoUrl = photoUrl;
          else delete next.photoUrl;
        }
        for (const attribute of request.deleteAttribute ?? []) {
          if (attribute === 'DISPLAY_NAME') delete next.displayName;
          if (attribute === 'PHOTO_URL') delete next.photoUrl;
          if (attribute === 'PHONE_NUMBER') delete next.phoneNumber;
          if (attribute === 'EMAIL') {
            delete next.email;
            next.emailVerified = false;
          }
          if (attribute === 'PASSWORD') {
            delete next.passwordHash;
            delete next.passwordUpdatedAt;
          }
        }
        for (const providerId of request.deleteProvider ?? []) {
          if (providerId === 'password') {
            delete next.passwordHash;
            delete next.passwordUpdatedAt;
          } else if (providerId === 'phone') delete next.phoneNumber;
          else next.providerUserInfo = next.providerUserInfo.filter((p) => p.providerId !== providerId);
        }
        if (request.deletePasskey?.length) {
          const rest = passkeysWithout(current.passkeys ?? [], request.deletePasskey);
          if (rest.length) next.passkeys = rest;
          else delete next.passkeys;
        }
        if (request.emailVerified !== undefined) next.emailVerified = request.emailVerified;
        if (request.disableUser !== undefined) next.disabled = request.disableUser;
        if (customAttributes !== undefined) {
          if (customAttributes === '{}') delete next.customAttributes;
          else next.customAttributes = customAttributes;
        }
        if (phoneNumber !== undefined) next.phoneNumber = phoneNumber;
        if (request.mfa !== undefined) {
          const enrollments = enrollmentsFromAdmin(request.mfa.enrollments ?? [], current.mfaInfo ?? [], now);
          if (enrollments.length) next.mfaInfo = enrollments;
          else {
            delete next.mfaInfo;
            // Recovery codes go with the last second factor (auth/mfa/recovery-codes.ts).
            delete next.recoveryCodes;
          }
        }
        if (revokes) next.validSince = validSince ?? Math.floor(now / 1000);
        guardOperatorClaim(caller, current.customAttributes, next.customAttributes);
        return next;
      },
      () => (refresh ? [refresh.mutation] : []),
    );
    if (owner && !caller.isAdmin && previousEmail && user.email && previousEmail !== user.email) this.deps.onEmailChanged(caller, user, previousEmail);
    if (!refresh) return { user };
    const tokens = await this.sessions.tokensFor(caller.realm, user, Math.floor(now / 1000), signInProvider, refresh.token, undefined, secondFactor);
    return { user, tokens };
  }

  async deleteAccount(caller: Caller, request: DeleteRequest): Promise<void> {
    if (request.idToken !== undefined && !caller.isAdmin) {
      const { claims } = await authenticate(this.deps, caller, request.idToken);
      if (claims.firebase.sign_in_provider !== 'anonymous') requireRecentLogin(this.deps, claims);
      await this.deps.users.delete(caller.realm, claims.sub);
      return;
    }
    requireAdmin(caller);
    if (request.localId === undefined) throw authError('MISSING_LOCAL_ID');
    const user = await this.deps.users.get(caller.realm, checkLocalId(request.localId));
    if (!user) throw authError('USER_NOT_FOUND');
    guardOperatorAccount(caller, user);
    await this.deps.users.delete(caller.realm, user.localId);
  }

  async createAuthUri(caller: Caller, request: CreateAuthUriRequest): Promise<CreateAuthUriResult> {
    if (!request.identifier) throw authError('MISSING_IDENTIFIER');
    if (!request.continueUri) throw authError('MISSING_CONTINUE_URI');
    const email = normalizeEmail(request.identifier);
    if (!isValidEmail(email)) throw authError('INVALID_IDENTIFIER');
    const sessionId = this.deps.tokens.newSessionId();
    const config = await this.deps.projects.config(caller.realm);
    // With enumeration protection on, nothing tells whether the address has an account.
    if (config.emailPrivacyConfig.enableImprovedEmailPrivacy && !caller.isAdmin) return { sessionId };
    const user = await this.deps.users.getByEmail(caller.realm, email);
    const methods = user ? signInMethods(user) : [];
    return { registered: user !== undefined, allProviders: methods, signinMethods: methods, sessionId };
  }
}

function add(found: Map<string, UserRecord>, user: UserRecord | undefined): void {
  if (user) found.set(user.localId, user);
}

/** Custom claims as firebase-admin sends them: a JSON object, at most 1000 characters, no reserved names. */
function checkClaims(text: string): string {
  if (text.length > maxClaimsLength) throw authError('CLAIMS_TOO_LARGE');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw authError('INVALID_CLAIMS');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw authError('INVALID_CLAIMS');
  for (const name of Object.keys(parsed)) if (reservedClaims.has(name)) throw authError('FORBIDDEN_CLAIM', name);
  return JSON.stringify(parsed);
}
