import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ProjectConfig, ProjectDirectory } from '../core/project-config.js';
import { authError } from '../errors.js';
import { defaultSupportedIdps, isOidcProviderId, isSamlProviderId, presetFor, type IdpConfig, type OidcProvider, type SamlProvider } from '../federation/idp-configs.js';
import type { CallerResolver } from './caller.js';
import { realmPaths } from './schemas.js';

type Wire = Record<string, unknown>;

interface Collection {
  /** The path segment, e.g. `oauthIdpConfigs`. */
  name: string;
  /** The query parameter naming a new config on create, e.g. `oauthIdpConfigId`. */
  idParameter: string;
  owns: (providerId: string) => boolean;
  fromWire: (providerId: string, body: Wire, current: IdpConfig | undefined) => IdpConfig;
  toWire: (config: IdpConfig) => Wire;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const flag = (value: unknown, fallback: boolean): boolean => (typeof value === 'boolean' ? value : fallback);

function required(value: unknown, field: string): string {
  const found = text(value);
  if (!found) throw authError('INVALID_CONFIG', `${field} is required`);
  return found;
}

const oidc: Collection = {
  name: 'oauthIdpConfigs',
  idParameter: 'oauthIdpConfigId',
  owns: isOidcProviderId,
  fromWire(providerId, body, current) {
    const base = current?.kind === 'oidc' ? current : undefined;
    const issuer = required(text(body.issuer) ?? base?.issuer, 'issuer');
    try {
      new URL(issuer);
    } catch {
      throw authError('INVALID_CONFIG', 'issuer must be a URL');
    }
    const config: OidcProvider = {
      kind: 'oidc',
      providerId,
      enabled: flag(body.enabled, base?.enabled ?? false),
      issuer,
      clientId: required(text(body.clientId) ?? base?.clientId, 'clientId'),
      scopes: base?.scopes ?? ['openid', 'email', 'profile'],
    };
    const displayName = text(body.displayName) ?? base?.displayName;
    if (displayName) config.displayName = displayName;
    const secret = text(body.clientSecret) ?? base?.clientSecret;
    if (secret) config.clientSecret = secret;
    return config;
  },
  toWire(config) {
    const c = config as OidcProvider;
    return { clientId: c.clientId, issuer: c.issuer, displayName: c.displayName, enabled: c.enabled, clientSecret: c.clientSecret, responseType: { code: true, idToken: false } };
  },
};

const saml: Collection = {
  name: 'inboundSamlConfigs',
  idParameter: 'inboundSamlConfigId',
  owns: isSamlProviderId,
  fromWire(providerId, body, current) {
    const base = current?.kind === 'saml' ? current : undefined;
    const idp = (body.idpConfig ?? {}) as Wire;
    const sp = (body.spConfig ?? {}) as Wire;
    const certificates = Array.isArray(idp.idpCertificates)
      ? idp.idpCertificates.map((c) => required((c as Wire).x509Certificate, 'idpConfig.idpCertificates[].x509Certificate'))
      : base?.idpCertificates;
    if (!certificates?.length) throw authError('INVALID_CONFIG', 'idpConfig.idpCertificates is required');
    const config: SamlProvider = {
      kind: 'saml',
      providerId,
      enabled: flag(body.enabled, base?.enabled ?? false),
      idpEntityId: required(text(idp.idpEntityId) ?? base?.idpEntityId, 'idpConfig.idpEntityId'),
      ssoUrl: required(text(idp.ssoUrl) ?? base?.ssoUrl, 'idpConfig.ssoUrl'),
      idpCertificates: certificates,
      spEntityId: required(text(sp.spEntityId) ?? base?.spEntityId, 'spConfig.spEntityId'),
    };
    const callbackUri = text(sp.callbackUri) ?? base?.callbackUri;
    if (callbackUri) config.callbackUri = callbackUri;
    const displayName = text(body.displayName) ?? base?.displayName;
    if (displayName) config.displayName = displayName;
    return config;
  },
  toWire(config) {
    const c = config as SamlProvider;
    return {
      idpConfig: { idpEntityId: c.idpEntityId, ssoUrl: c.ssoUrl, idpCertificates: c.idpCertificates.map((x509Certificate) => ({ x509Certificate })) },
      spConfig: { spEntityId: c.spEntityId, callbackUri: c.callbackUri },
      displayName: c.displayName,
      enabled: c.enabled,
    };
  },
};

const builtIn: Collection = {
  name: 'defaultSupportedIdpConfigs',
  idParameter: 'idpId',
  owns: (providerId) => defaultSupportedIdps.includes(providerId),
  fromWire(providerId, body, current) {
    const base = current && current.kind !== 'saml' ? current : undefined;
    const config = presetFor(providerId, required(text(body.clientId) ?? base?.clientId, 'clientId'), text(body.clientSecret) ?? base?.clientSecret, flag(body.enabled, base?.enabled ?? false));
    if (!config || config.kind === 'saml') throw authError('INVALID_CONFIG', `${providerId} sign-in is not supported yet`);
    // Hearth's extension: other endpoints for the same kind of provider (GitHub Enterprise, a
    // Microsoft tenant, a local stand-in in tests).
    const endpoint = (field: string, fallback: string): string => {
      const value = text(body[field]) ?? (base as Record<string, unknown> | undefined)?.[field];
      if (typeof value !== 'string') return fallback;
      if (!/^https?:\/\//.test(value)) throw authError('INVALID_CONFIG', `${field} must be an http(s) URL`);
      return value;
    };
    if (config.kind === 'oidc') return { ...config, issuer: endpoint('issuer', config.issuer) };
    const oauth2 = {
      ...config,
      authorizationEndpoint: endpoint('authorizationEndpoint', config.authorizationEndpoint),
      tokenEndpoint: endpoint('tokenEndpoint', config.tokenEndpoint),
      userinfoEndpoint: endpoint('userinfoEndpoint', config.userinfoEndpoint),
    };
    const currentCheck = base?.kind === 'oauth2' ? base.tokenCheck?.endpoint : undefined;
    if (config.tokenCheck) oauth2.tokenCheck = { ...config.tokenCheck, endpoint: endpoint('tokenCheckEndpoint', currentCheck ?? config.tokenCheck.endpoint) };
    return oauth2;
  },
  toWire(config) {
    const c = config as Exclude<IdpConfig, SamlProvider>;
    const endpoints =
      c.kind === 'oidc'
        ? { issuer: c.issuer }
        : { authorizationEndpoint: c.authorizationEndpoint, tokenEndpoint: c.tokenEndpoint, userinfoEndpoint: c.userinfoEndpoint, tokenCheckEndpoint: c.tokenCheck?.endpoint };
    return { clientId: c.clientId, clientSecret: c.clientSecret, enabled: c.enabled, ...endpoints };
  },
};

/**
 * Provider configuration in the shapes firebase-admin's providerConfig calls use (oauthIdpConfigs,
 * inboundSamlConfigs) and Identity Platform's defaultSupportedIdpConfigs. Administrators only.
 * A tenant's providers are its own, under /projects/{p}/tenants/{t}/ (firebase-admin's authForTenant).
 */
export function registerIdpConfigRoutes(app: FastifyInstance, projects: ProjectDirectory, callers: CallerResolver): void {
  for (const [path, projectPathParams] of realmPaths) {
    for (const collection of [oidc, saml, builtIn]) registerCollection(app, projects, callers, collection, path, projectPathParams);
  }
}

function registerCollection(app: FastifyInstance, projects: ProjectDirectory, callers: CallerResolver, collection: Collection, path: string, projectPathParams: Record<string, unknown>): void {
  const base = `/identitytoolkit.googleapis.com/v2${path}/${collection.name}`;
  // A realm key is the resource's path: `p` or `p/tenants/t`.
  const resource = (realm: string, config: IdpConfig) => ({ name: `projects/${realm}/${collection.name}/${config.providerId}`, ...collection.toWire(config) });
  const load = async (request: FastifyRequest) => {
    const { realm } = callers.fromPath(request, (request.params as { projectId: string }).projectId);
    return { projectId: realm, config: await projects.config(realm) };
  };
  const save = (projectId: string, config: ProjectConfig, idps: Record<string, IdpConfig>) => projects.save(projectId, { ...config, idps });
  const checkId = (providerId: string | undefined): string => {
    if (!providerId || !collection.owns(providerId)) throw authError('INVALID_CONFIG_ID', `${providerId ?? '(none)'} is not a ${collection.name} id`);
    return providerId;
  };

  app.get(base, { schema: { params: projectPathParams } }, async (request) => {
    const { projectId, config } = await load(request);
    return { [collection.name]: Object.values(config.idps).filter((c) => collection.owns(c.providerId)).map((c) => resource(projectId, c)) };
  });
  app.post(base, { schema: { params: projectPathParams, body: { type: 'object' } } }, async (request) => {
    const { projectId, config } = await load(request);
    const providerId = checkId((request.query as Record<string, string | undefined>)[collection.idParameter]);
    if (config.idps[providerId]) throw authError('CONFIGURATION_EXISTS');
    const created = collection.fromWire(providerId, request.body as Wire, undefined);
    await save(projectId, config, { ...config.idps, [providerId]: created });
    return resource(projectId, created);
  });
  app.get(`${base}/:providerId`, async (request) => {
    const { projectId, config } = await load(request);
    const found = config.idps[checkId((request.params as { providerId: string }).providerId)];
    if (!found) throw authError('CONFIGURATION_NOT_FOUND');
    return resource(projectId, found);
  });
  app.patch(`${base}/:providerId`, { schema: { body: { type: 'object' } } }, async (request) => {
    const { projectId, config } = await load(request);
    const providerId = checkId((request.params as { providerId: string }).providerId);
    const current = config.idps[providerId];
    if (!current) throw authError('CONFIGURATION_NOT_FOUND');
    const updated = collection.fromWire(providerId, request.body as Wire, current);
    await save(projectId, config, { ...config.idps, [providerId]: updated });
    return resource(projectId, updated);
  });
  app.delete(`${base}/:providerId`, async (request) => {
    const { projectId, config } = await load(request);
    const providerId = checkId((request.params as { providerId: string }).providerId);
    if (!config.idps[providerId]) throw authError('CONFIGURATION_NOT_FOUND');
    const { [providerId]: _removed, ...rest } = config.idps;
    await save(projectId, config, rest);
    return {};
  });
}
