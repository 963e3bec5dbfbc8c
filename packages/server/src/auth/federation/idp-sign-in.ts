import { vetNewAccount } from '../core/blocking-functions.js';
import type { ProviderUserInfo, SecondFactorClaim, Store, UserRecord } from '../../storage/store.js';
import { admitSignUp, authenticate, type AuthDeps } from '../core/auth-context.js';
import type { Caller } from '../core/requests.js';
import type { SessionService, SignInResult } from '../core/sessions.js';
import { secondFactorOf } from '../core/tokens.js';
import { newSignedInAccount } from '../core/user-repository.js';
import { ApiError } from '../../http/api-error.js';
import { authError } from '../errors.js';
import { fakeProviderProfile } from './fake-credentials.js';
import type { IdpConfig } from './idp-configs.js';
import type { OAuth2Client } from './oauth2.js';
import type { SamlServiceProvider } from './saml.js';
import type { IdpProfile, OidcRelyingParty } from './oidc.js';

export interface SignInWithIdpRequest {
  requestUri?: string;
  postBody?: string;
  sessionId?: string;
  idToken?: string;
  returnIdpCredential?: boolean;
  /** false for reauthentication: never create an account. */
  autoCreate?: boolean;
}

/** A provider's answer, checked: who it says the user is. */
interface VerifiedIdentity {
  providerId: string;
  profile: IdpProfile;
  reauthentication?: boolean;
  /** --dev: the Auth emulator's made-up credentials (fake-credentials.ts), which get the emulator's email rules. */
  madeUp?: boolean;
}

export interface IdpSignInResult {
  providerId: string;
  profile: IdpProfile;
  user?: UserRecord;
  /** A session's tokens, or (the account has second factors) the request for one. */
  tokens?: SignInResult['tokens'];
  isNewUser: boolean;
  /** The identity's email belongs to another account: the SDK's account-exists-with-different-credential. */
  needConfirmation?: boolean;
  /** A link that was refused (FEDERATED_USER_ID_ALREADY_LINKED, EMAIL_EXISTS), answered with the credential. */
  refusal?: 'FEDERATED_USER_ID_ALREADY_LINKED' | 'EMAIL_EXISTS';
}

/**
 * signInWithIdp / verifyAssertion: turns a provider's answer (a handler session's callback, or an
 * ID token the app got itself) into a verified profile, then signs in, signs up or links.
 */
export class IdpSignIn {
  constructor(
    private readonly deps: AuthDeps,
    private readonly store: Store,
    private readonly oidc: OidcRelyingParty,
    private readonly saml: SamlServiceProvider,
    private readonly oauth2: OAuth2Client,
    private readonly sessions: SessionService,
    /** --dev: the Auth emulator's made-up credentials for providers not configured here (fake-credentials.ts). */
    private readonly acceptFakeCredentials = false,
  ) {}

  async signIn(caller: Caller, request: SignInWithIdpRequest): Promise<IdpSignInResult> {
    const verified = await this.verifiedProfile(caller, request);
    const { providerId, profile } = verified;
    try {
      return await this.resolveAccount(caller, verified, request.idToken, verified.reauthentication === true || request.autoCreate === false);
    } catch (error) {
      for (const refusal of ['FEDERATED_USER_ID_ALREADY_LINKED', 'EMAIL_EXISTS'] as const) {
        if (error instanceof ApiError && error.wireMessage === refusal) return { providerId, profile, isNewUser: false, refusal };
      }
      throw error;
    }
  }

  private async verifiedProfile(caller: Caller, request: SignInWithIdpRequest): Promise<VerifiedIdentity> {
    if (!request.requestUri) throw authError('MISSING_REQUEST_URI');
    const config = await this.deps.projects.config(caller.realm);
    const enabled = (providerId: string): IdpConfig => {
      const idp: IdpConfig | undefined = config.idps[providerId];
      if (!idp || !idp.enabled) throw authError('OPERATION_NOT_ALLOWED', `The identity provider ${providerId} is disabled for this project.`);
      return idp;
    };

    const post = new URLSearchParams(request.postBody ?? '');
    const postedProvider = post.get('providerId');
    const postedToken = post.get('id_token') || post.get('access_token');
    if (postedProvider && postedToken && this.acceptFakeCredentials && !config.idps[postedProvider]) {
      return { providerId: postedProvider, profile: fakeProviderProfile(postedToken), madeUp: true };
    }
    if (postedProvider && post.get('id_token')) {
      const provider = enabled(postedProvider);
      if (provider.kind !== 'oidc') throw authError('INVALID_IDP_RESPONSE', `${postedProvider} does not issue ID tokens.`);
      return { providerId: postedProvider, profile: await this.oidc.verifyIdToken(provider, post.get('id_token')!, post.get('nonce') ?? undefined) };
    }
    if (postedProvider && post.get('access_token')) {
      const provider = enabled(postedProvider);
      if (provider.kind !== 'oauth2') throw authError('INVALID_IDP_RESPONSE', `${postedProvider} takes an ID token, not an access token.`);
      return { providerId: postedProvider, profile: await this.oauth2.profileForAppToken(provider, post.get('access_token')!) };
    }

    let callback: URL;
    try {
      callback = new URL(request.requestUri);
    } catch {
      throw authError('INVALID_IDP_RESPONSE');
    }
    // --dev: the Auth emulator's sign-in widget answers with the handler's URL, the provider and a made-up ID token (idp-widget.ts).
    const widgetProvider = callback.searchParams.get('providerId');
    const widgetToken = callback.searchParams.get('id_token') || callback.searchParams.get('access_token');
    if (this.acceptFakeCredentials && widgetProvider && widgetToken && !callback.searchParams.has('state') && !config.idps[widgetProvider]) {
      return { providerId: widgetProvider, profile: fakeProviderProfile(widgetToken), madeUp: true };
    }
    const state = callback.searchParams.get('state');
    if (!state || !request.sessionId || state !== request.sessionId) throw authError('INVALID_IDP_RESPONSE', 'The sign-in session does not match.');
    const session = await this.store.getHandlerSession(state);
    if (!session || session.projectId !== caller.realm || session.callbackUrl !== callback.toString() || Date.now() >= session.expiresAt) {
      throw authError('INVALID_IDP_RESPONSE', 'The sign-in session is unknown, used or expired.');
    }
    // Single use: the session goes before the code is exchanged, so a replay finds nothing.
    try {
      await this.store.commit([{ kind: 'deleteHandlerSession', id: session.id }]);
    } catch {
      throw authError('INVALID_IDP_RESPONSE', 'The sign-in session was already used.');
    }
    const provider = enabled(session.providerId);
    const base = { providerId: session.providerId, reauthentication: session.authType.startsWith('reauth') };
    if (provider.kind === 'saml') {
      if (!session.samlResponse || !session.samlRequestId) throw authError('INVALID_IDP_RESPONSE', 'The SAML answer is missing.');
      return { ...base, profile: await this.saml.verifyResponse(provider, session.samlResponse, { requestId: session.samlRequestId, issuedAt: session.createdAt }) };
    }
    if (provider.kind === 'oauth2') {
      if (!session.codeVerifier) throw authError('INVALID_IDP_RESPONSE', 'The sign-in session is not an OAuth one.');
      return { ...base, profile: await this.oauth2.completeAuthorization(provider, callback, { state, codeVerifier: session.codeVerifier }) };
    }
    if (!session.nonce || !session.codeVerifier) throw authError('INVALID_IDP_RESPONSE', 'The sign-in session is not an OpenID one.');
    return { ...base, profile: await this.oidc.completeAuthorization(provider, callback, { state, nonce: session.nonce, codeVerifier: session.codeVerifier }) };
  }

  private async resolveAccount(caller: Caller, identity: VerifiedIdentity, idToken: string | undefined, mustExist: boolean): Promise<IdpSignInResult> {
    const { providerId, profile } = identity;
    const { users } = this.deps;
    const linked = await users.getByFederatedId(caller.realm, providerId, profile.rawId);
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const info = providerInfo(providerId, profile);
    // The address the account may take: one the provider vouches for; an unverified one only from
    // the Auth emulator's made-up credentials in --dev, as the emulator records it (unverified).
    const accountEmail = profile.email && (profile.emailVerified || identity.madeUp) ? profile.email : undefined;
    const holder = profile.email ? await users.getByEmail(caller.realm, profile.email) : undefined;

    if (idToken !== undefined) {
      const { user: current, claims } = await authenticate(this.deps, caller, idToken);
      if (linked && linked.localId !== current.localId) throw authError('FEDERATED_USER_ID_ALREADY_LINKED');
      if (current.providerUserInfo.some((p) => p.providerId === providerId && p.rawId !== profile.rawId)) {
        throw authError('PROVIDER_ALREADY_LINKED');
      }
      // One account per email: an identity whose address is another account's is not linked here.
      if (holder && holder.localId !== current.localId) throw authError('EMAIL_EXISTS');
      return this.link(caller, current, providerId, profile, secondFactorOf(claims), (u) => {
        const next: UserRecord = { ...u, providerUserInfo: [...u.providerUserInfo.filter((p) => p.providerId !== providerId), info], lastLoginAt: now };
        if (!next.email && accountEmail) {
          next.email = accountEmail;
          next.emailVerified = profile.emailVerified === true;
        } else if (next.email && profile.emailVerified && profile.email === next.email) {
          next.emailVerified = true;
        }
        return next;
      });
    }

    if (linked) {
      if (linked.disabled) throw authError('USER_DISABLED');
      const change = (u: UserRecord) => ({ ...u, providerUserInfo: u.providerUserInfo.map((p) => (p.providerId === providerId ? info : p)) });
      const { user, tokens } = await this.sessions.startSession(caller.realm, linked, providerId, { change });
      return { providerId, profile, user, tokens, isNewUser: false };
    }

    // Reauthentication proves who is already here; it never makes a stray new account.
    // EMAIL_NOT_FOUND is the SDK's user-not-found, which its reauthentication turns into user-mismatch.
    if (mustExist) throw authError('EMAIL_NOT_FOUND', 'No account is linked to this identity.');
    if (holder) {
      // An address the provider does not vouch for never joins an existing account: the SDK's
      // account-exists-with-different-credential, as Firebase answers.
      if (!profile.emailVerified) return { providerId, profile, isNewUser: false, needConfirmation: true };
      if (holder.disabled) throw authError('USER_DISABLED');
      // A verified address signs in to the account that holds it and links the identity, as
      // Firebase does; if that account's own address was never verified, whoever made it proved
      // nothing: its password, phone number, other providers and sessions go (Firebase's takeover).
      const change = (u: UserRecord): UserRecord => (u.emailVerified ? linkedTo(u, info) : takenOverBy(u, info, profile, authTime));
      const { user, tokens } = await this.sessions.startSession(caller.realm, holder, providerId, { change });
      return { providerId, profile, user, tokens, isNewUser: false };
    }

    // A first sign-in with the provider creates the account: it counts toward the sign-up limit.
    return admitSignUp(this.deps, caller, async (): Promise<IdpSignInResult> => {
      const fresh = newSignedInAccount(now, { emailVerified: accountEmail !== undefined && profile.emailVerified === true, providerUserInfo: [info] });
      if (accountEmail) fresh.email = accountEmail;
      if (profile.displayName) fresh.displayName = profile.displayName;
      if (profile.photoUrl) fresh.photoUrl = profile.photoUrl;
      const vetted = await vetNewAccount(this.deps.blocking, { realm: caller.realm, signInMethod: providerId, ipAddress: caller.clientIp }, fresh);
      const refresh = this.deps.tokens.newRefreshToken(caller.realm, vetted.user, authTime, providerId, vetted.developerClaims);
      const user = await users.insert(caller.realm, vetted.user, [refresh.mutation]);
      return { providerId, profile, user, tokens: await this.sessions.tokensFor(caller.realm, user, authTime, providerId, refresh.token, vetted.developerClaims), isNewUser: true };
    });
  }

  /** Linking to the signed-in account: its session goes on, with the second factor it passed. */
  private async link(
    caller: Caller,
    account: UserRecord,
    providerId: string,
    profile: IdpProfile,
    secondFactor: SecondFactorClaim | undefined,
    change: (u: UserRecord) => UserRecord,
  ): Promise<IdpSignInResult> {
    const authTime = Math.floor(Date.now() / 1000);
    const refresh = this.deps.tokens.newRefreshToken(caller.realm, account, authTime, providerId, undefined, secondFactor);
    const user = await this.deps.users.update(caller.realm, account.localId, change, () => [refresh.mutation]);
    const tokens = await this.sessions.tokensFor(caller.realm, user, authTime, providerId, refresh.token, undefined, secondFactor);
    return { providerId, profile, user, tokens, isNewUser: false };
  }
}

/** An account whose address is verified, joined by a provider identity vouching for the same address. */
function linkedTo(account: UserRecord, info: ProviderUserInfo): UserRecord {
  return { ...account, providerUserInfo: [...account.providerUserInfo.filter((p) => p.providerId !== info.providerId), info] };
}

/**
 * An account whose address was never verified, signed in to by a provider vouching for it: the
 * identity becomes its only way in (password, phone number and other providers dropped, earlier
 * sessions revoked), its profile the provider's, its address verified.
 */
function takenOverBy(account: UserRecord, info: ProviderUserInfo, profile: IdpProfile, authTime: number): UserRecord {
  const { passwordHash: _password, passwordUpdatedAt: _updated, phoneNumber: _phone, displayName: _name, photoUrl: _photo, emailLinkSignin: _link, ...kept } = account;
  return {
    ...kept,
    emailVerified: true,
    providerUserInfo: [info],
    validSince: Math.max(account.validSince, authTime),
    ...(profile.displayName ? { displayName: profile.displayName } : {}),
    ...(profile.photoUrl ? { photoUrl: profile.photoUrl } : {}),
  };
}

function providerInfo(providerId: string, profile: IdpProfile): ProviderUserInfo {
  const info: ProviderUserInfo = { providerId, rawId: profile.rawId, federatedId: profile.rawId };
  if (profile.email) info.email = profile.email;
  if (profile.displayName) info.displayName = profile.displayName;
  if (profile.photoUrl) info.photoUrl = profile.photoUrl;
  return info;
}
