import * as client from 'openid-client';
import { authError } from '../errors.js';
import type { OAuth2Provider } from './idp-configs.js';
import type { IdpProfile } from './oidc.js';

/**
 * Plain OAuth 2.0 providers (GitHub, Facebook): authorization code with PKCE and state, code
 * exchange on the server, then the profile from the provider's user endpoint.
 */
export class OAuth2Client {
  private configuration(provider: OAuth2Provider): client.Configuration {
    const authorization = new URL(provider.authorizationEndpoint);
    const config = new client.Configuration(
      { issuer: authorization.origin, authorization_endpoint: provider.authorizationEndpoint, token_endpoint: provider.tokenEndpoint },
      provider.clientId,
      undefined,
      client.ClientSecretPost(provider.clientSecret ?? ''),
    );
    const loopback = (url: URL) => url.protocol === 'http:' && (url.hostname === 'localhost' || /^127\./.test(url.hostname));
    if (loopback(authorization) || loopback(new URL(provider.tokenEndpoint)) || loopback(new URL(provider.userinfoEndpoint))) client.allowInsecureRequests(config);
    return config;
  }

  async authorizationRequest(provider: OAuth2Provider, redirectUri: string, state: string, scopes: string[], extra: Record<string, string>): Promise<{ url: string; codeVerifier: string }> {
    const codeVerifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(this.configuration(provider), {
      ...extra,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: [...new Set([...provider.scopes, ...scopes])].join(' '),
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.toString(), codeVerifier };
  }

  async completeAuthorization(provider: OAuth2Provider, callbackUrl: URL, expected: { state: string; codeVerifier: string }): Promise<IdpProfile> {
    let accessToken: string;
    try {
      const tokens = await client.authorizationCodeGrant(this.configuration(provider), callbackUrl, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        idTokenExpected: false,
      });
      accessToken = tokens.access_token;
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The provider's answer was refused: ${(error as Error).message}`);
    }
    return this.profile(provider, accessToken);
  }

  /**
   * An access token the app brings itself: first make sure it was issued to this client (a token
   * given to any other app must not sign anyone in here), then read the profile.
   */
  async profileForAppToken(provider: OAuth2Provider, accessToken: string): Promise<IdpProfile> {
    const check = provider.tokenCheck;
    if (!check) throw authError('INVALID_IDP_RESPONSE', `${provider.providerId} access tokens cannot be checked; sign in through the handler instead.`);
    let issuedToUs = false;
    try {
      if (check.kind === 'github') {
        const url = check.endpoint.replace('{client_id}', encodeURIComponent(provider.clientId));
        const basic = Buffer.from(`${provider.clientId}:${provider.clientSecret ?? ''}`).toString('base64');
        const response = await fetch(url, { method: 'POST', headers: { authorization: `Basic ${basic}`, accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify({ access_token: accessToken }) });
        issuedToUs = response.ok;
      } else {
        const url = new URL(check.endpoint);
        url.searchParams.set('input_token', accessToken);
        url.searchParams.set('access_token', `${provider.clientId}|${provider.clientSecret ?? ''}`);
        const response = await fetch(url, { headers: { accept: 'application/json' } });
        const body = (await response.json()) as { data?: { app_id?: string; is_valid?: boolean } };
        issuedToUs = response.ok && body.data?.is_valid === true && body.data.app_id === provider.clientId;
      }
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The provider could not check the access token (${(error as Error).name}).`);
    }
    if (!issuedToUs) throw authError('INVALID_IDP_RESPONSE', 'The access token was not issued to this app.');
    return this.profile(provider, accessToken);
  }

  /** The provider's user endpoint, called with the access token. */
  async profile(provider: OAuth2Provider, accessToken: string): Promise<IdpProfile> {
    let body: Record<string, unknown>;
    try {
      const response = await client.fetchProtectedResource(this.configuration(provider), accessToken, new URL(provider.userinfoEndpoint), 'GET', undefined, new Headers({ accept: 'application/json' }));
      if (!response.ok) throw new Error(`status ${response.status}`);
      body = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The provider refused the access token: ${(error as Error).message}`);
    }
    return { ...profileFromUser(body), accessToken };
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

/** GitHub (`id`, `login`, `avatar_url`) and Facebook (`id`, `picture.data.url`) user shapes. */
function profileFromUser(user: Record<string, unknown>): IdpProfile {
  const rawId = text(user.sub) ?? text(user.id);
  if (!rawId) throw authError('INVALID_IDP_RESPONSE', 'The provider did not say who the user is.');
  const profile: IdpProfile = { rawId, emailVerified: user.email_verified === true, raw: user };
  const email = text(user.email);
  if (email) profile.email = email.toLowerCase();
  const name = text(user.name) ?? text(user.login);
  if (name) profile.displayName = name;
  const picture = user.picture as { data?: { url?: unknown } } | string | undefined;
  const photo = text(user.avatar_url) ?? (typeof picture === 'string' ? picture : text(picture?.data?.url));
  if (photo) profile.photoUrl = photo;
  const login = text(user.login);
  if (login) profile.screenName = login;
  return profile;
}
