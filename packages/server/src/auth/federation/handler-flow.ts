import { createHash, randomBytes } from 'node:crypto';
import type { HandlerSessionRecord, Store } from '../../storage/store.js';
import { isAuthorizedUrl } from '../core/authorized-domains.js';
import type { ProjectDirectory } from '../core/project-config.js';
import { isValidTenantId, realmKey, tenantOf } from '../tenants/realm.js';
import type { OidcRelyingParty } from './oidc.js';
import type { OAuth2Client } from './oauth2.js';
import type { SamlServiceProvider } from './saml.js';
import { madeUpIdentities, type WidgetData } from './idp-widget.js';

/** The event the hosted pages hand to the SDK (its AuthEvent), through the iframe. */
export interface AuthEvent {
  type: string;
  eventId: string | null;
  urlResponse: string | null;
  sessionId: string | null;
  postBody: string | null;
  tenantId: string | null;
  error?: { code: string; message: string };
}

/** Where and how the handler page delivers its event. */
export interface Delivery {
  apiKey: string;
  appName: string;
  authType: string;
  redirectUrl: string;
  event: AuthEvent;
}

export type StartOutcome = { kind: 'redirect'; location: string; session: HandlerSessionRecord } | { kind: 'deliver'; delivery: Delivery } | { kind: 'widget'; widget: WidgetData };
export type CallbackOutcome = { kind: 'deliver'; delivery: Delivery } | { kind: 'refuse'; message: string };

export interface HandlerStartParams {
  apiKey?: string;
  appName?: string;
  authType?: string;
  redirectUrl?: string;
  providerId?: string;
  eventId?: string;
  scopes?: string;
  customParameters?: string;
  tid?: string;
}

const authTypes = new Set(['signInViaPopup', 'linkViaPopup', 'reauthViaPopup', 'signInViaRedirect', 'linkViaRedirect', 'reauthViaRedirect']);
/** Custom parameters an app may pass through to the provider (others could subvert the flow). */
const passThroughParameters = new Set(['prompt', 'login_hint', 'hd', 'access_type', 'include_granted_scopes', 'max_age', 'ui_locales', 'display', 'domain_hint']);

export function hashBinding(binding: string): string {
  return createHash('sha256').update(binding).digest('hex');
}

function errorEvent(authType: string, eventId: string | undefined, code: string, message: string): AuthEvent {
  return { type: authType, eventId: eventId ?? null, urlResponse: null, sessionId: null, postBody: null, tenantId: null, error: { code: `auth/${code}`, message } };
}

/**
 * The hosted handler page's work: start a federated sign-in (check the app, the provider and where
 * to return; remember PKCE verifier, nonce and state; send the browser to the provider), then take
 * the provider's answer back and hand it to the SDK as an AuthEvent for signInWithIdp.
 */
export class HandlerFlow {
  constructor(
    private readonly store: Store,
    private readonly projects: ProjectDirectory,
    private readonly oidc: OidcRelyingParty,
    private readonly saml: SamlServiceProvider,
    private readonly oauth2: OAuth2Client,
    /** emulatorWidget (--dev): a provider without settings gets the Auth emulator's sign-in widget (idp-widget.ts). */
    private readonly options: { publicUrl: () => string; sessionTtlMs: number; emulatorWidget?: boolean },
    /** Where provider failures go (the log), since visitors only get a plain sentence. */
    private readonly onProviderError: (providerId: string, error: unknown) => void = () => undefined,
  ) {}

  get callbackUrl(): string {
    return new URL('/__/auth/handler', this.options.publicUrl()).toString();
  }

  async start(params: HandlerStartParams, browserBinding: string): Promise<StartOutcome> {
    const authType = params.authType && authTypes.has(params.authType) ? params.authType : 'unknown';
    const apiKey = params.apiKey ?? '';
    const appName = params.appName ?? '[DEFAULT]';
    const redirectUrl = params.redirectUrl ?? '';
    const fail = (code: string, message: string): StartOutcome => ({
      kind: 'deliver',
      delivery: { apiKey, appName, authType, redirectUrl, event: errorEvent(authType, params.eventId, code, message) },
    });
    const projectId = this.projects.projectForApiKey(apiKey);
    if (!projectId) return fail('invalid-api-key', 'Your API key is invalid, please check you have copied it correctly.');
    if (authType === 'unknown') return fail('invalid-auth-event', 'An internal AuthError has occurred.');
    // The SDK names its auth.tenantId as `tid`: the tenant's providers and domains, and its realm's session.
    const realm = params.tid ? realmKey(projectId, params.tid) : projectId;
    const tenant = params.tid ? (isValidTenantId(params.tid) ? this.projects.tenant(realm) : undefined) : undefined;
    if (params.tid && !tenant) return fail('tenant-not-found', 'There is no tenant corresponding to the provided identifier.');
    if (tenant?.disableAuth) return fail('project-disabled', 'Sign-in is disabled for this tenant.');
    const config = await this.projects.config(realm);
    if (!isAuthorizedUrl(redirectUrl, config.authorizedDomains, new URL(this.options.publicUrl()).hostname)) {
      return fail('unauthorized-domain', 'This domain is not authorized for OAuth operations for your Firebase project.');
    }
    const providerId = params.providerId ?? '';
    const provider = config.idps[providerId];
    if (!provider && this.options.emulatorWidget && providerId !== '') {
      const accounts = await madeUpIdentities(this.store, realm, providerId);
      return { kind: 'widget', widget: { widget: true, apiKey, appName, authType, redirectUrl, redirectAllowed: true, eventId: params.eventId ?? null, tenantId: params.tid ?? null, providerId, accounts } };
    }
    if (!provider || !provider.enabled) return fail('operation-not-allowed', 'The identity provider configuration is not found or disabled.');

    const id = randomBytes(24).toString('base64url');
    const scopes = (params.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    let location: string;
    let secrets: Pick<HandlerSessionRecord, 'nonce' | 'codeVerifier' | 'samlRequestId'>;
    try {
      if (provider.kind === 'saml') {
        const request = await this.saml.authorizationRequest(provider, id);
        location = request.url;
        secrets = { samlRequestId: request.requestId };
      } else if (provider.kind === 'oauth2') {
        const request = await this.oauth2.authorizationRequest(provider, this.callbackUrl, id, scopes, customParameters(params.customParameters));
        location = request.url;
        secrets = { codeVerifier: request.codeVerifier };
      } else {
        const request = await this.oidc.authorizationRequest(provider, this.callbackUrl, id, scopes, customParameters(params.customParameters));
        location = request.url;
        secrets = { nonce: request.nonce, codeVerifier: request.codeVerifier };
      }
    } catch (error) {
      this.onProviderError(providerId, error);
      return fail('internal-error', 'The identity provider could not be reached. Try again later.');
    }
    const now = Date.now();
    const session: HandlerSessionRecord = {
      id,
      projectId: realm,
      providerId,
      apiKey,
      appName,
      authType,
      redirectUrl,
      browserBindingHash: hashBinding(browserBinding),
      ...secrets,
      createdAt: now,
      expiresAt: now + this.options.sessionTtlMs,
    };
    if (params.eventId) session.eventId = params.eventId;
    await this.store.commit([{ kind: 'putHandlerSession', session }]);
    return { kind: 'redirect', location, session };
  }

  /**
   * A SAML IdP posts its answer here from its own site, so the browser sends no (Lax) flow cookie;
   * the answer is kept and the browser sent on to the handler by GET, where the cookie is checked.
   */
  async receiveSamlPost(relayState: string | undefined, samlResponse: string | undefined): Promise<string | undefined> {
    const session = relayState ? await this.store.getHandlerSession(relayState) : undefined;
    if (!session || !samlResponse || session.samlRequestId === undefined || session.samlResponse || session.callbackUrl || Date.now() >= session.expiresAt) return undefined;
    try {
      await this.store.commit([{ kind: 'updateHandlerSession', session: { ...session, samlResponse } }]);
    } catch {
      return undefined;
    }
    const next = new URL(this.callbackUrl);
    next.searchParams.set('state', session.id);
    return next.toString();
  }

  /** The provider sent the browser back with `state` and a code (or an error). */
  async callback(callbackUrl: URL, browserBinding: string | undefined): Promise<CallbackOutcome> {
    const state = callbackUrl.searchParams.get('state');
    const session = state ? await this.store.getHandlerSession(state) : undefined;
    // An unknown or foreign state never becomes an event: it could be a forgery aimed at the app.
    if (!session || Date.now() >= session.expiresAt) return { kind: 'refuse', message: 'This sign-in attempt has expired or is unknown. Please start again.' };
    if (session.samlRequestId !== undefined && !session.samlResponse) return { kind: 'refuse', message: 'The identity provider has not answered yet.' };
    if (!browserBinding || hashBinding(browserBinding) !== session.browserBindingHash || session.callbackUrl) {
      return { kind: 'refuse', message: 'This sign-in attempt was started in another browser. Please start again.' };
    }
    const { apiKey, appName, authType, redirectUrl } = session;
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError) {
      await this.store.commit([{ kind: 'deleteHandlerSession', id: session.id }]);
      const cancelled = providerError === 'access_denied';
      const event = errorEvent(authType, session.eventId, cancelled ? 'user-cancelled' : 'invalid-credential', callbackUrl.searchParams.get('error_description') ?? providerError);
      return { kind: 'deliver', delivery: { apiKey, appName, authType, redirectUrl, event } };
    }
    try {
      await this.store.commit([{ kind: 'updateHandlerSession', session: { ...session, callbackUrl: callbackUrl.toString() } }]);
    } catch {
      return { kind: 'refuse', message: 'This sign-in attempt was already used. Please start again.' };
    }
    const event: AuthEvent = { type: authType, eventId: session.eventId ?? null, urlResponse: callbackUrl.toString(), sessionId: session.id, postBody: null, tenantId: tenantOf(session.projectId) ?? null };
    return { kind: 'deliver', delivery: { apiKey, appName, authType, redirectUrl, event } };
  }

  async sweep(now = Date.now()): Promise<void> {
    await this.store.commit([{ kind: 'deleteExpiredHandlerSessions', expiredBefore: now }]);
  }
}

function customParameters(json: string | undefined): Record<string, string> {
  if (!json) return {};
  try {
    const parsed = JSON.parse(json) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(parsed)) {
      if (passThroughParameters.has(name) && typeof value === 'string') result[name] = value;
    }
    return result;
  } catch {
    return {};
  }
}
