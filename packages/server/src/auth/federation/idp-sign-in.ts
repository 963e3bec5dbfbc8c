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
    const { providerId, profile, reauthentication } = await this.verifiedProfile(caller, request);
    try {
      return await this.resolveAccount(caller, providerId, profile, request.idToken, reauthentication || request.autoCreate === false);
    } catch (error) {
      for (const refusal of ['FEDERATED_USER_ID_ALREADY_LINKED', 'EMAIL_EXISTS'] as const) {
        if (error instanceof ApiError && error.wireMessage === refusal) return { providerId, profile, isNewUser: false, refusal };
      }
      throw error;
    }
  }

  private async verifiedProfile(caller: Caller, request: SignInWithIdpRequest): Promise<{ providerId: string; profile: IdpProfile; reauthentication?: boolean }> {
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
      return { providerId: postedProvider, profile: fakeProviderProfile(postedToken) };
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

  private async resolveAccount(caller: Caller, providerId: string, profile: IdpProfile, idToken: string | undefined, mustExist: boolean): Promise<IdpSignInResult> {
    const { users } = this.deps;
    const linked = await users.getByFederatedId(caller.realm, providerId, profile.rawId);
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const info = providerInfo(providerId, profile);

    if (idToken !== undefined) {
      const { user: current, claims } = await authenticate(this.deps, caller, idToken);
      if (linked && linked.localId !== current.localId) throw authError('FEDERATED_USER_ID_ALREADY_LINKED');
      if (current.providerUserInfo.some((p) => p.providerId === providerId && p.rawId !== profile.rawId)) {
        throw authError('PROVIDER_ALREADY_LINKED');
      }
      return this.link(caller, current, providerId, profile, secondFactorOf(claims), (u) => {
        const next: UserRecord = { ...u, providerUserInfo: [...u.providerUserInfo.filter((p) => p.providerId !== providerId), info], lastLoginAt: now };
        if (!next.email && profile.email && profile.emailVerified) {
          next.email = profile.email;
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
    // Only an address the provider vouches for becomes the account's: an unverified one could be
    // someone else's, who would later prove it by mail and find this identity inside their account.
    const email = profile.email && profile.emailVerified ? profile.email : undefined;
    if (email && (await users.getByEmail(caller.realm, email))) {
      return { providerId, profile, isNewUser: false, needConfirmation: true };
    }

    // A first sign-in with the provider creates the account: it counts toward the sign-up limit.
    return admitSignUp(this.deps, caller, async (): Promise<IdpSignInResult> => {
      const fresh = newSignedInAccount(now, { emailVerified: email !== undefined, providerUserInfo: [info] });
      if (email) fresh.email = email;
      if (profile.displayName) fresh.displayName = profile.displayName;
      if (profile.photoUrl) fresh.photoUrl = profile.photoUrl;
      const refresh = this.deps.tokens.newRefreshToken(caller.realm, fresh, authTime, providerId);
      const user = await users.insert(caller.realm, fresh, [refresh.mutation]);
      return { providerId, profile, user, tokens: await this.sessions.tokensFor(caller.realm, user, authTime, providerId, refresh.token), isNewUser: true };
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

function providerInfo(providerId: string, profile: IdpProfile): ProviderUserInfo {
  const info: ProviderUserInfo = { providerId, rawId: profile.rawId, federatedId: profile.rawId };
  if (profile.email) info.email = profile.email;
  if (profile.displayName) info.displayName = profile.displayName;
  if (profile.photoUrl) info.photoUrl = profile.photoUrl;
  return info;
}
