import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { authError } from '../errors.js';
import type { OidcProvider } from './idp-configs.js';

/** What Hearth keeps of a provider's answer: the subject and profile claims. */
export interface IdpProfile {
  rawId: string;
  email?: string;
  emailVerified: boolean;
  displayName?: string;
  photoUrl?: string;
  firstName?: string;
  lastName?: string;
  /** The provider's own claims, returned to the SDK as `rawUserInfo`. */
  raw: Record<string, unknown>;
  idToken?: string;
  accessToken?: string;
  /** The provider's user name (GitHub login), reported as `screenName`. */
  screenName?: string;
}

export interface AuthorizationRequest {
  url: string;
  codeVerifier: string;
  nonce: string;
}

/** Plain http is allowed only for providers on this machine (the demo and test providers). */
function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\./.test(url.hostname);
}

/**
 * OpenID Connect relying party (openid-client): discovery, authorization code with PKCE, state and
 * nonce, code exchange and ID token validation, all on the server; the client secret never leaves it.
 */
export class OidcRelyingParty {
  private readonly configurations = new Map<string, Promise<client.Configuration>>();
  /** One remote key set per provider: jose caches and refreshes it (on an unknown kid, at most every 30 s). */
  private readonly keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  private keySet(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
    let keys = this.keySets.get(jwksUri);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(jwksUri));
      this.keySets.set(jwksUri, keys);
    }
    return keys;
  }

  private configuration(provider: OidcProvider): Promise<client.Configuration> {
    const key = `${provider.issuer}\u0000${provider.clientId}\u0000${provider.clientSecret ?? ''}`;
    let pending = this.configurations.get(key);
    if (!pending) {
      const issuer = new URL(provider.issuer);
      const options = isLoopback(issuer) && issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
      pending = client.discovery(issuer, provider.clientId, provider.clientSecret, undefined, options).catch((error: unknown) => {
        throw authError('INVALID_IDP_RESPONSE', `The identity provider could not be reached (${(error as Error).name}).`);
      });
      // A failed discovery is not cached: the provider may come up later.
      pending.catch(() => this.configurations.delete(key));
      this.configurations.set(key, pending);
    }
    return pending;
  }

  async authorizationRequest(provider: OidcProvider, redirectUri: string, state: string, scopes: string[], extra: Record<string, string>): Promise<AuthorizationRequest> {
    const config = await this.configuration(provider);
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      ...extra,
      ...provider.authorizationParameters,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: [...new Set(['openid', ...provider.scopes, ...scopes])].join(' '),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.toString(), codeVerifier, nonce };
  }

  /** Exchanges the code from `callbackUrl`; any failure (state, nonce, signature, audience) is INVALID_IDP_RESPONSE. */
  async completeAuthorization(provider: OidcProvider, callbackUrl: URL, expected: { state: string; nonce: string; codeVerifier: string }): Promise<IdpProfile> {
    const config = await this.configuration(provider);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The provider's answer was refused: ${(error as Error).message}`);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw authError('INVALID_IDP_RESPONSE', 'The provider sent no ID token.');
    let claims: JWTPayload = { ...idClaims };
    // Conforming providers may keep profile claims out of the ID token; they are at userinfo.
    if (claims.email === undefined && config.serverMetadata().userinfo_endpoint) {
      try {
        claims = { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...claims };
      } catch (error) {
        throw authError('INVALID_IDP_RESPONSE', `The provider's userinfo was refused: ${(error as Error).message}`);
      }
    }
    return { ...profileFromClaims(claims), ...(tokens.id_token ? { idToken: tokens.id_token } : {}), accessToken: tokens.access_token };
  }

  /** An ID token the app obtained itself (signInWithCredential): signature, issuer, audience, expiry, nonce. */
  async verifyIdToken(provider: OidcProvider, idToken: string, nonce: string | undefined): Promise<IdpProfile> {
    const config = await this.configuration(provider);
    const metadata = config.serverMetadata();
    if (!metadata.jwks_uri) throw authError('INVALID_IDP_RESPONSE', 'The provider publishes no keys.');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.keySet(metadata.jwks_uri), { issuer: metadata.issuer, audience: provider.clientId }));
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The ID token was refused: ${(error as Error).message}`);
    }
    if (nonce !== undefined && !nonceMatches(nonce, payload.nonce)) throw authError('MISSING_OR_INVALID_NONCE');
    return { ...profileFromClaims(payload), idToken };
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function profileFromClaims(claims: JWTPayload): IdpProfile {
  if (!claims.sub) throw authError('INVALID_IDP_RESPONSE', 'The ID token has no subject.');
  const profile: IdpProfile = { rawId: claims.sub, emailVerified: claims.email_verified === true || claims.email_verified === 'true', raw: { ...claims } };
  const email = text(claims.email);
  if (email) profile.email = email.toLowerCase();
  const name = text(claims.name);
  if (name) profile.displayName = name;
  const picture = text(claims.picture);
  if (picture) profile.photoUrl = picture;
  const given = text(claims.given_name);
  if (given) profile.firstName = given;
  const family = text(claims.family_name);
  if (family) profile.lastName = family;
  return profile;
}

/** A raw nonce matches an ID token's nonce as it is or as its SHA-256 (Apple and Google One Tap hash it). */
function nonceMatches(raw: string, inToken: unknown): boolean {
  return inToken === raw || inToken === createHash('sha256').update(raw).digest('hex');
}
