import { tenantIdPattern } from '../tenants/realm.js';

/**
 * JSON Schemas of the identity API's request bodies. Types are checked without coercion and an
 * unknown field is refused, as Google does ("Unknown name ..."). Fields the SDKs send that do not
 * change what Hearth does (client type, reCAPTCHA version, ...) are accepted and ignored.
 */
type JsonSchema = Record<string, unknown>;

// proto3 JSON reads null as "not set", so every field may be null (see withoutNulls).
const string: JsonSchema = { type: ['string', 'null'] };
const boolean: JsonSchema = { type: ['boolean', 'null'] };
const strings: JsonSchema = { type: ['array', 'null'], items: { type: 'string' }, maxItems: 1000 };
const ignored: JsonSchema = {};

/** Sent by one SDK or another on most calls; informational for Hearth. */
const common = {
  clientType: ignored,
  recaptchaVersion: ignored,
  captchaResponse: ignored,
  captchaChallenge: ignored,
  instanceId: ignored,
  delegatedProjectNumber: ignored,
  targetProjectId: ignored,
  tenantId: { type: ['string', 'null'] },
  tenantProjectNumber: ignored,
};

export function body(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties: { ...common, ...properties }, additionalProperties: false };
}

/** A second factor as firebase-admin sends it (createUser's mfaInfo, updateUser's mfa.enrollments). */
const adminEnrollments: JsonSchema = {
  type: ['array', 'null'],
  maxItems: 20,
  items: {
    type: 'object',
    additionalProperties: false,
    properties: { mfaEnrollmentId: { type: 'string' }, displayName: { type: 'string' }, phoneInfo: { type: 'string' }, enrolledAt: { type: 'string' } },
  },
};

export const signUpBody = body({
  email: string,
  password: string,
  displayName: string,
  photoUrl: string,
  idToken: string,
  returnSecureToken: boolean,
  localId: string,
  emailVerified: boolean,
  disabled: boolean,
  phoneNumber: string,
  mfaInfo: adminEnrollments,
});

export const signInWithPasswordBody = body({
  email: string,
  password: string,
  returnSecureToken: boolean,
  pendingIdToken: ignored,
  idToken: ignored,
});

export const lookupBody = body({
  idToken: string,
  localId: strings,
  email: strings,
  phoneNumber: strings,
  initialEmail: strings,
});

export const updateBody = body({
  idToken: string,
  localId: string,
  email: string,
  password: string,
  displayName: string,
  photoUrl: string,
  deleteAttribute: { type: ['array', 'null'], items: { enum: ['DISPLAY_NAME', 'PHOTO_URL', 'EMAIL', 'PASSWORD', 'PHONE_NUMBER'] }, maxItems: 10 },
  deleteProvider: strings,
  deletePasskey: { type: ['array', 'null'], items: { type: 'string', maxLength: 1400 }, maxItems: 20 },
  returnSecureToken: boolean,
  oobCode: string,
  emailVerified: boolean,
  disableUser: boolean,
  customAttributes: string,
  validSince: { type: ['string', 'integer', 'null'] },
  phoneNumber: string,
  mfa: { type: ['object', 'null'], additionalProperties: false, properties: { enrollments: adminEnrollments } },
});

export const deleteBody = body({ idToken: string, localId: string });

export const createAuthUriBody = body({
  identifier: string,
  continueUri: string,
  providerId: string,
  oauthScope: ignored,
  context: ignored,
  openidRealm: ignored,
  otaApp: ignored,
  appId: ignored,
  hostedDomain: ignored,
  sessionId: ignored,
  authFlowType: ignored,
  customParameter: ignored,
});

export const sendOobCodeBody = body({
  requestType: string,
  email: string,
  idToken: string,
  newEmail: string,
  continueUrl: string,
  canHandleCodeInApp: boolean,
  returnOobLink: boolean,
  iOSBundleId: ignored,
  iOSAppStoreId: ignored,
  androidPackageName: ignored,
  androidInstallApp: ignored,
  androidMinimumVersionCode: ignored,
  androidMinimumVersion: ignored,
  dynamicLinkDomain: ignored,
  linkDomain: ignored,
  captchaResp: ignored,
  userIp: ignored,
  challenge: ignored,
  kind: ignored,
});

export const resetPasswordBody = body({ oobCode: string, newPassword: string, email: string, oldPassword: ignored });

export const emailLinkSignInBody = body({ email: string, oobCode: string, idToken: string, returnSecureToken: ignored });

export const signInWithIdpBody = body({
  requestUri: string,
  postBody: string,
  sessionId: string,
  idToken: string,
  returnSecureToken: ignored,
  returnIdpCredential: boolean,
  returnRefreshToken: ignored,
  pendingToken: ignored,
  pendingIdToken: ignored,
  autoCreate: boolean,
});

export const batchDeleteBody = body({ localIds: strings, force: boolean });

/**
 * Drops null fields. In an update, a null display name or photo URL is the SDK's way of saying
 * "remove it" (updateProfile({displayName: null})), so those become deleteAttribute entries.
 */
export function withoutNulls(body: Record<string, unknown>, nullDeletes: Record<string, string> = {}): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const deletions: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value !== null) result[name] = value;
    else if (nullDeletes[name]) deletions.push(nullDeletes[name]);
  }
  if (deletions.length) result.deleteAttribute = [...((result.deleteAttribute as string[] | undefined) ?? []), ...deletions];
  return result;
}

export const updateNullDeletes = { displayName: 'DISPLAY_NAME', photoUrl: 'PHOTO_URL' };

/**
 * A validated request body as the core receives it: nulls dropped (see withoutNulls). Its tenantId
 * has already chosen the caller's realm (CallerResolver), which is all it is for.
 */
export function requestBody<T>(request: { body: unknown }, nullDeletes: Record<string, string> = {}): T {
  return withoutNulls(request.body as Record<string, unknown>, nullDeletes) as T;
}

export const tokenBody: JsonSchema = {
  type: 'object',
  properties: { grant_type: string, refresh_token: string, tenantId: string },
  additionalProperties: false,
};

/**
 * The token endpoint's answer (responses.ts tokenResponse): seven strings, always all present.
 * A response schema lets Fastify serialize it with a compiled serializer instead of JSON.stringify;
 * refreshes are the most frequent identity call (every client, every hour, and on every reload).
 */
export const tokenAnswer: JsonSchema = {
  type: 'object',
  properties: Object.fromEntries(['access_token', 'expires_in', 'token_type', 'refresh_token', 'id_token', 'user_id', 'project_id'].map((name) => [name, { type: 'string' }])),
  required: ['access_token', 'expires_in', 'token_type', 'refresh_token', 'id_token', 'user_id', 'project_id'],
  additionalProperties: false,
};

export const listQuery: JsonSchema = {
  type: 'object',
  properties: { maxResults: { type: 'string', pattern: '^(-1|[0-9]{1,6})$' }, nextPageToken: string, key: string },
};

const projectIdSchema = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' };

export const projectPathParams: JsonSchema = {
  type: 'object',
  properties: { projectId: projectIdSchema },
  required: ['projectId'],
};

/** `/projects/{projectId}/tenants/{tenantId}/...`: firebase-admin's authForTenant(tenantId). */
export const tenantPathParams: JsonSchema = {
  type: 'object',
  properties: { projectId: projectIdSchema, tenantId: { type: 'string', pattern: tenantIdPattern } },
  required: ['projectId', 'tenantId'],
};

/** A project's own path and its tenants' (`/projects/{p}/tenants/{t}`), with their parameter schemas. */
export const realmPaths = [
  ['/projects/:projectId', projectPathParams],
  ['/projects/:projectId/tenants/:tenantId', tenantPathParams],
] as const;
