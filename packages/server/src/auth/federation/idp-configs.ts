/**
 * Identity provider settings of a project, kept in its config. Three kinds, in the shapes of
 * Identity Platform's admin API: built-in providers (defaultSupportedIdpConfigs: google.com, ...),
 * any OpenID Connect provider (oauthIdpConfigs, ids `oidc.*`) and SAML (inboundSamlConfigs, `saml.*`).
 */

export interface OidcProvider {
  kind: 'oidc';
  providerId: string;
  displayName?: string;
  enabled: boolean;
  /** Discovery: `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** Never leaves the server (the code exchange happens here). */
  clientSecret?: string;
  scopes: string[];
  /** Parameters sent with every authorization request (the demo provider asks for `prompt=login`). */
  authorizationParameters?: Record<string, string>;
}

export interface OAuth2Provider {
  kind: 'oauth2';
  providerId: string;
  displayName?: string;
  enabled: boolean;
  clientId: string;
  clientSecret?: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Answers the profile for the access token; mapped by `profile`. */
  userinfoEndpoint: string;
  scopes: string[];
  /**
   * How to tell that an access token an app brings (signInWithCredential) was issued to this
   * client and not to some other app: GitHub's token check API, Facebook's debug_token.
   */
  tokenCheck?: { kind: 'github' | 'facebook'; endpoint: string };
}

export interface SamlProvider {
  kind: 'saml';
  providerId: string;
  displayName?: string;
  enabled: boolean;
  idpEntityId: string;
  ssoUrl: string;
  idpCertificates: string[];
  spEntityId: string;
  /** Where the IdP posts its response (our handler). */
  callbackUri?: string;
}

export type IdpConfig = OidcProvider | OAuth2Provider | SamlProvider;

/** Presets for the providers Firebase calls "default supported"; the admin fills id and secret. */
const presets: Record<string, Omit<OidcProvider, 'clientId' | 'enabled'> | Omit<OAuth2Provider, 'clientId' | 'enabled'>> = {
  'google.com': { kind: 'oidc', providerId: 'google.com', displayName: 'Google', issuer: 'https://accounts.google.com', scopes: ['openid', 'email', 'profile'] },
  'microsoft.com': { kind: 'oidc', providerId: 'microsoft.com', displayName: 'Microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0', scopes: ['openid', 'email', 'profile'] },
  'apple.com': { kind: 'oidc', providerId: 'apple.com', displayName: 'Apple', issuer: 'https://appleid.apple.com', scopes: ['openid', 'email', 'name'] },
  'github.com': {
    kind: 'oauth2',
    providerId: 'github.com',
    displayName: 'GitHub',
    authorizationEndpoint: 'https://github.com/login/oauth/authorize',
    tokenEndpoint: 'https://github.com/login/oauth/access_token',
    userinfoEndpoint: 'https://api.github.com/user',
    scopes: ['read:user', 'user:email'],
    tokenCheck: { kind: 'github', endpoint: 'https://api.github.com/applications/{client_id}/token' },
  },
  'facebook.com': {
    kind: 'oauth2',
    providerId: 'facebook.com',
    displayName: 'Facebook',
    authorizationEndpoint: 'https://www.facebook.com/v19.0/dialog/oauth',
    tokenEndpoint: 'https://graph.facebook.com/v19.0/oauth/access_token',
    userinfoEndpoint: 'https://graph.facebook.com/me?fields=id,name,email,picture',
    scopes: ['email', 'public_profile'],
    tokenCheck: { kind: 'facebook', endpoint: 'https://graph.facebook.com/debug_token' },
  },
};

export const defaultSupportedIdps = [...Object.keys(presets), 'twitter.com'];

export function presetFor(providerId: string, clientId: string, clientSecret: string | undefined, enabled: boolean): IdpConfig | undefined {
  const preset = presets[providerId];
  if (!preset) return undefined;
  const config = { ...preset, clientId, enabled, scopes: [...preset.scopes] } as IdpConfig;
  if (clientSecret !== undefined && config.kind !== 'saml') config.clientSecret = clientSecret;
  return config;
}

export function isOidcProviderId(providerId: string): boolean {
  return /^oidc\.[A-Za-z0-9_.-]{1,64}$/.test(providerId);
}

export function isSamlProviderId(providerId: string): boolean {
  return /^saml\.[A-Za-z0-9_.-]{1,64}$/.test(providerId);
}
