import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { isAuthorizedUrl } from '../core/authorized-domains.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type { Delivery, HandlerFlow, HandlerStartParams } from '../federation/handler-flow.js';
import type { IdpSignIn, IdpSignInResult, SignInWithIdpRequest } from '../federation/idp-sign-in.js';
import { assets, pageSecurityHeaders, renderPage } from '../federation/pages.js';
import { renderIdpWidget } from '../federation/idp-widget.js';
import type { FailureThrottle } from '../core/throttle.js';
import { authError } from '../errors.js';
import type { CallerResolver } from './caller.js';
import * as schemas from './schemas.js';
import { realmKey, tenantField } from '../tenants/realm.js';
import { clientAddressOf } from '../../http/address-key.js';

export interface FederationServices {
  flow: HandlerFlow;
  idpSignIn: IdpSignIn;
  projects: ProjectDirectory;
  callers: CallerResolver;
  publicUrl: () => string;
  /** Handler starts per client address: each stores a session row until it expires. */
  startThrottle: FailureThrottle;
}

const text = { type: 'string', maxLength: 4096 };
/** Repeated parameters arrive as arrays and are refused here rather than crashing further in. */
const handlerQuery = {
  type: 'object',
  properties: Object.fromEntries(
    ['apiKey', 'appName', 'authType', 'redirectUrl', 'v', 'providerId', 'eventId', 'scopes', 'customParameters', 'tid', 'state', 'code', 'error', 'error_description', 'iss', 'eid', 'fw'].map((name) => [name, text]),
  ),
};
/** A SAML answer is a few KiB; 256 KiB of base64 is plenty. */
const maxSamlResponseLength = 350_000;

const v1 = '/identitytoolkit.googleapis.com/v1';
const v3 = '/www.googleapis.com/identitytoolkit/v3/relyingparty';
const flowCookieTtlSeconds = 15 * 60;

/** One cookie per flow, named after its state, so two sign-ins in one browser do not collide. */
function flowCookieName(state: string): string {
  return `hearth_auth_${state.slice(0, 16).replace(/[^A-Za-z0-9_-]/g, '')}`;
}

/**
 * The hosted auth pages (handler, iframe, gapi.js) and signInWithIdp. The SDK in its custom-endpoint
 * mode asks for `/emulator/auth/*`; on a real auth domain it asks for `/__/auth/*`: both are served.
 */
export async function registerFederationRoutes(app: FastifyInstance, services: FederationServices): Promise<void> {
  const { flow, idpSignIn, projects, callers } = services;

  const servingHost = () => new URL(services.publicUrl()).hostname;
  /** The domains of the project an API key names (none for an unknown key), or of its tenant (the project's and the tenant's own). */
  const authorizedDomainsOf = async (apiKey: string | undefined, tenantId?: string | null): Promise<string[]> => {
    const projectId = apiKey ? projects.projectForApiKey(apiKey) : undefined;
    if (!projectId) return [];
    const realm = tenantId ? realmKey(projectId, tenantId) : projectId;
    if (tenantId && !projects.tenant(realm)) return [];
    return (await projects.config(realm)).authorizedDomains;
  };
  /** The iframe does not know the tenant (the SDK does not say): every domain of the project and of its tenants. */
  const framingDomainsOf = async (apiKey: string | undefined): Promise<string[]> => {
    const projectId = apiKey ? projects.projectForApiKey(apiKey) : undefined;
    if (!projectId) return [];
    return [...(await authorizedDomainsOf(apiKey)), ...projects.tenantsOf(projectId).flatMap((tenant) => tenant.authorizedDomains)];
  };
  const sendPage = (reply: FastifyReply, html: string) => reply.headers(pageSecurityHeaders).type('text/html; charset=utf-8').send(html);
  const sendScript = (reply: FastifyReply, source: string) =>
    reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }).send(source);

  const deliver = async (reply: FastifyReply, delivery: Delivery) => {
    const redirectAllowed = isAuthorizedUrl(delivery.redirectUrl, await authorizedDomainsOf(delivery.apiKey, delivery.event.tenantId), servingHost());
    return sendPage(reply, renderPage('Signing in', '/__/auth/handler.js', { ...delivery, redirectAllowed }));
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as Record<string, string | undefined>;
    if (query.state === undefined) {
      const key = clientAddressOf(request);
      if (services.startThrottle.isBlocked(key)) throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many sign-in attempts from this address; try again later.');
      services.startThrottle.recordFailure(key);
    }
    if (query.state !== undefined) {
      const callbackUrl = new URL(request.url, services.publicUrl());
      const outcome = await flow.callback(callbackUrl, request.cookies[flowCookieName(query.state)]);
      void reply.clearCookie(flowCookieName(query.state), { path: '/' });
      if (outcome.kind === 'refuse') return sendPage(reply.status(400), renderPage('Signing in', '/__/auth/handler.js', { refuse: outcome.message }));
      return deliver(reply, outcome.delivery);
    }
    const binding = randomBytes(24).toString('base64url');
    const outcome = await flow.start(query as HandlerStartParams, binding);
    // The --dev widget stores no session row: it is not counted (a browser test suite opens many).
    if (outcome.kind === 'widget') services.startThrottle.forgetOne(clientAddressOf(request));
    if (outcome.kind === 'deliver') return deliver(reply, outcome.delivery);
    if (outcome.kind === 'widget') return sendPage(reply, renderIdpWidget(outcome.widget));
    void reply.setCookie(flowCookieName(outcome.session.id), binding, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: services.publicUrl().startsWith('https:'),
      maxAge: flowCookieTtlSeconds,
    });
    return reply.header('cache-control', 'no-store').redirect(outcome.location, 302);
  };
  // Only the handler reads and sets cookies: the plugin's hooks stay off every other request.
  await app.register(async (scope) => {
    await scope.register(cookie);
    scope.get('/__/auth/handler', { schema: { querystring: handlerQuery } }, handler);
    scope.get('/emulator/auth/handler', { schema: { querystring: handlerQuery } }, handler);
  });
  const samlPost = { type: 'object', properties: { SAMLResponse: { type: 'string', maxLength: maxSamlResponseLength }, RelayState: { type: 'string', maxLength: 200 } } };
  app.post('/__/auth/handler', { schema: { body: samlPost } }, async (request, reply) => {
    const { SAMLResponse, RelayState } = request.body as { SAMLResponse?: string; RelayState?: string };
    const next = await flow.receiveSamlPost(RelayState, SAMLResponse);
    if (!next) return sendPage(reply.status(400), renderPage('Signing in', '/__/auth/handler.js', { refuse: 'This sign-in attempt has expired or is unknown. Please start again.' }));
    return reply.header('cache-control', 'no-store').redirect(next, 303);
  });

  const iframe = async (request: FastifyRequest, reply: FastifyReply) => {
    const { apiKey } = request.query as { apiKey?: string };
    const authorizedDomains = [...(await framingDomainsOf(apiKey)), servingHost()];
    // This page is meant to be framed by apps: no frame-ancestors limit, but no referrer leaks either.
    return sendPage(reply, renderPage('Hearth', '/__/auth/iframe.js', { authorizedDomains }));
  };
  app.get('/__/auth/iframe', iframe);
  app.get('/emulator/auth/iframe', iframe);
  app.get('/__/auth/iframe.js', (_request, reply) => sendScript(reply, assets.iframe));
  app.get('/__/auth/handler.js', (_request, reply) => sendScript(reply, assets.handler));
  app.get('/__/auth/gapi.js', (_request, reply) => sendScript(reply, assets.gapi));
  app.get('/__/auth/idp-widget.js', (_request, reply) => sendScript(reply, assets.idpWidget));

  const signInWithIdp = async (request: FastifyRequest) => {
    const body = schemas.requestBody<SignInWithIdpRequest>(request);
    const caller = callers.fromApiKey(request);
    const result = await idpSignIn.signIn(caller, body);
    // A refused link still carries the provider's credential, as Google answers (200 + errorMessage),
    // so the SDK's credentialFromError can hand it back to the app.
    if (result.refusal) return { ...idpResponse(result, true), ...tenantField(caller.realm), errorMessage: result.refusal };
    return { ...idpResponse(result, body.returnIdpCredential === true), ...tenantField(caller.realm) };
  };
  app.post(`${v1}/accounts::signInWithIdp`, { schema: { body: schemas.signInWithIdpBody } }, signInWithIdp);
  app.post(`${v3}/verifyAssertion`, { schema: { body: schemas.signInWithIdpBody } }, signInWithIdp);
}

/** The VerifyAssertionResponse the SDK reads (tokens, profile, rawUserInfo, isNewUser, needConfirmation). */
function idpResponse(result: IdpSignInResult, withCredential: boolean): Record<string, unknown> {
  const { profile, user } = result;
  const response: Record<string, unknown> = {
    kind: 'identitytoolkit#VerifyAssertionResponse',
    providerId: result.providerId,
    federatedId: `${result.providerId}:${profile.rawId}`,
    rawUserInfo: JSON.stringify(profile.raw),
    isNewUser: result.isNewUser,
    emailVerified: profile.emailVerified,
  };
  if (profile.email) response.email = profile.email;
  if (profile.displayName) response.displayName = response.fullName = profile.displayName;
  if (profile.firstName) response.firstName = profile.firstName;
  if (profile.lastName) response.lastName = profile.lastName;
  if (profile.photoUrl) response.photoUrl = profile.photoUrl;
  if (profile.screenName) response.screenName = profile.screenName;
  if (withCredential || result.needConfirmation || result.refusal) {
    if (profile.idToken) response.oauthIdToken = profile.idToken;
    if (profile.accessToken) response.oauthAccessToken = profile.accessToken;
  }
  if (result.needConfirmation) response.needConfirmation = true;
  if (user) response.localId = user.localId;
  if (result.tokens) Object.assign(response, result.tokens);
  return response;
}
