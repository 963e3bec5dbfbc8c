import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { authError } from '../errors.js';
import type { SamlProvider } from './idp-configs.js';
import type { IdpProfile } from './oidc.js';

/**
 * SAML 2.0 service provider (@node-saml/node-saml): AuthnRequests by HTTP-Redirect, responses by
 * HTTP-POST, signatures checked against the configured IdP certificates, audience, time window and
 * InResponseTo (the request this flow sent, kept in the handler session rather than a cache).
 */
export class SamlServiceProvider {
  constructor(private readonly callbackUrl: () => string) {}

  /** node-saml (with its XML and signature stack) is loaded by the first SAML sign-in, not by every server start. */
  private async client(provider: SamlProvider, expected: { requestId: string; issuedAt: number } | undefined, onRequestId?: (id: string) => void): Promise<SAML> {
    const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
    const cacheProvider: CacheProvider = {
      saveAsync: async (key, value) => {
        onRequestId?.(key);
        return { value, createdAt: Date.now() };
      },
      // node-saml reads the value as the request's creation time, for its expiry check.
      getAsync: async (key) => (expected && key === expected.requestId ? new Date(expected.issuedAt).toISOString() : null),
      removeAsync: async (key) => key,
    };
    return new SAML({
      callbackUrl: provider.callbackUri ?? this.callbackUrl(),
      entryPoint: provider.ssoUrl,
      issuer: provider.spEntityId,
      audience: provider.spEntityId,
      idpCert: provider.idpCertificates.map(toPem),
      idpIssuer: provider.idpEntityId,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      cacheProvider,
      acceptedClockSkewMs: 60_000,
    });
  }

  async authorizationRequest(provider: SamlProvider, state: string): Promise<{ url: string; requestId: string }> {
    let requestId = '';
    const url = await (await this.client(provider, undefined, (id) => (requestId = id))).getAuthorizeUrlAsync(state, undefined, {});
    if (!requestId) throw new Error('the SAML request has no ID');
    return { url, requestId };
  }

  async verifyResponse(provider: SamlProvider, samlResponse: string, request: { requestId: string; issuedAt: number }): Promise<IdpProfile> {
    let profile: Profile | null;
    try {
      ({ profile } = await (await this.client(provider, request)).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (error) {
      throw authError('INVALID_IDP_RESPONSE', `The SAML response was refused: ${(error as Error).message}`);
    }
    if (!profile?.nameID) throw authError('INVALID_IDP_RESPONSE', 'The SAML response names no subject.');
    const attribute = (name: string): string | undefined => {
      const value = (profile as Record<string, unknown>)[name];
      return typeof value === 'string' && value !== '' ? value : undefined;
    };
    const email = attribute('email') ?? attribute('mail') ?? attribute('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress') ?? (/^[^@\s]+@[^@\s]+$/.test(profile.nameID) ? profile.nameID : undefined);
    // The IdP is one the administrator configured and trusts to say who its users are.
    const result: IdpProfile = { rawId: profile.nameID, emailVerified: email !== undefined, raw: { ...profile } };
    if (email) result.email = email.toLowerCase();
    const displayName = attribute('displayName') ?? attribute('name');
    if (displayName) result.displayName = displayName;
    return result;
  }
}

/** Accepts a bare base64 certificate (as firebase-admin sends it) or a PEM. */
function toPem(certificate: string): string {
  if (certificate.includes('BEGIN CERTIFICATE')) return certificate;
  const body = certificate.replace(/\s+/g, '').match(/.{1,64}/g)?.join('\n') ?? '';
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`;
}
