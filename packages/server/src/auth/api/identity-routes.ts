import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ActionCodeService } from '../core/action-codes.js';
import type { AccountService } from '../core/accounts.js';
import type { CustomTokenSignIn, SignInWithCustomTokenRequest } from '../core/custom-tokens.js';
import { enforcePasswordPolicy, passwordPolicyResponse } from '../core/password-policy.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type {
  Caller,
  CreateAuthUriRequest,
  DeleteRequest,
  LookupRequest,
  SignInWithPasswordRequest,
  SignUpRequest,
  UpdateRequest,
} from '../core/requests.js';
import type { SessionService } from '../core/sessions.js';
import type { SignUpLimit } from '../core/signup-limit.js';
import type { SigningKeyRing } from '../core/signing-keys.js';
import type { HumanCheck } from '../core/verification.js';
import type { CallerResolver } from './caller.js';
import { createAuthUriResponse, lookupResponse, signInResponse, signUpResponse, updateResponse } from './responses.js';
import * as schemas from './schemas.js';
import { projectOf } from '../tenants/realm.js';

export interface IdentityServices {
  sessions: SessionService;
  accounts: AccountService;
  actions: ActionCodeService;
  projects: ProjectDirectory;
  callers: CallerResolver;
  customTokens: CustomTokenSignIn;
  /** The session-cookie key ring, published where firebase-admin's verifySessionCookie reads it. */
  sessionCookieKeys: SigningKeyRing;
  /** Hearth's reCAPTCHA stand-in: its site key is what getRecaptchaParam answers. */
  humanCheck: HumanCheck;
  /** Accounts clients may create per address and per project. */
  signUpLimit: SignUpLimit;
}

const nullableString = { type: ['string', 'null'] };
const signInWithCustomTokenBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    token: nullableString,
    returnSecureToken: { type: ['boolean', 'null'] },
    tenantId: nullableString,
    instanceId: {},
    delegatedProjectNumber: {},
    clientType: {},
    recaptchaVersion: {},
    tenantProjectNumber: {},
  },
};

interface Endpoint {
  /** `accounts:<v1>` under /identitytoolkit.googleapis.com/v1/ */
  v1: string;
  /** `relyingparty/<v3>` under /www.googleapis.com/identitytoolkit/v3/ */
  v3: string;
  schema: Record<string, unknown>;
  handle: (caller: Caller, body: never) => Promise<unknown>;
}

const v1Prefix = '/identitytoolkit.googleapis.com/v1';
const v3Prefix = '/www.googleapis.com/identitytoolkit/v3/relyingparty';

/** The client-facing account calls, on their v1 paths and their legacy v3 names. */
export function registerIdentityRoutes(app: FastifyInstance, services: IdentityServices): void {
  const { sessions, accounts, actions, projects, callers, customTokens, sessionCookieKeys } = services;
  const endpoints: Endpoint[] = [
    {
      v1: 'signUp',
      v3: 'signupNewUser',
      schema: schemas.signUpBody,
      handle: async (c, b: SignUpRequest) =>
        // With an ID token signUp adds a password to an existing account: nothing new to count.
        signUpResponse(await (b.idToken ? sessions.signUp(c, b) : services.signUpLimit.admit(c, () => sessions.signUp(c, b)))),
    },
    {
      v1: 'signInWithPassword',
      v3: 'verifyPassword',
      schema: schemas.signInWithPasswordBody,
      handle: async (c, b: SignInWithPasswordRequest) => signInResponse(await sessions.signInWithPassword(c, b)),
    },
    { v1: 'lookup', v3: 'getAccountInfo', schema: schemas.lookupBody, handle: async (c, b: LookupRequest) => lookupResponse(await accounts.lookup(c, b)) },
    {
      v1: 'update',
      v3: 'setAccountInfo',
      schema: schemas.updateBody,
      handle: async (c, b: UpdateRequest) => {
        if (b.oobCode !== undefined) return updateResponse({ user: await actions.apply(c, b.oobCode) });
        // A new password meets the project's policy (administrators set any, as on Google's servers).
        if (b.password !== undefined && !c.isAdmin) enforcePasswordPolicy((await projects.config(c.realm)).passwordPolicyConfig, b.password);
        return updateResponse(await accounts.update(c, b));
      },
    },
    {
      v1: 'signInWithCustomToken',
      v3: 'verifyCustomToken',
      schema: signInWithCustomTokenBody,
      handle: async (c, b: SignInWithCustomTokenRequest) => {
        const { tokens, isNewUser } = await customTokens.signIn(c, b);
        return { kind: 'identitytoolkit#VerifyCustomTokenResponse', isNewUser, ...tokens };
      },
    },
    {
      v1: 'delete',
      v3: 'deleteAccount',
      schema: schemas.deleteBody,
      handle: async (c, b: DeleteRequest) => {
        await accounts.deleteAccount(c, b);
        return { kind: 'identitytoolkit#DeleteAccountResponse' };
      },
    },
    {
      v1: 'createAuthUri',
      v3: 'createAuthUri',
      schema: schemas.createAuthUriBody,
      handle: async (c, b: CreateAuthUriRequest) => createAuthUriResponse(await accounts.createAuthUri(c, b)),
    },
  ];

  for (const endpoint of endpoints) {
    const handler = async (request: FastifyRequest) => {
      const body = schemas.requestBody<never>(request, endpoint.v1 === 'update' ? schemas.updateNullDeletes : {});
      return endpoint.handle(callers.fromApiKey(request), body);
    };
    app.post(`${v1Prefix}/accounts::${endpoint.v1}`, { schema: { body: endpoint.schema } }, handler);
    app.post(`${v3Prefix}/${endpoint.v3}`, { schema: { body: endpoint.schema } }, handler);
  }

  const projectConfig = async (request: FastifyRequest) => {
    const caller = callers.fromApiKey(request);
    const config = await projects.config(caller.realm);
    return { projectId: projectOf(caller.realm), authorizedDomains: config.authorizedDomains };
  };
  app.get(`${v1Prefix}/projects`, projectConfig);
  app.get(`${v3Prefix}/getProjectConfig`, async (request) => {
    const config = await projects.config(callers.fromApiKey(request).realm);
    return { ...(await projectConfig(request)), allowPasswordUser: config.signIn.email.enabled, enableAnonymousUser: config.signIn.anonymous.enabled };
  });

  app.get(`${v3Prefix}/publicKeys`, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=3600, must-revalidate, no-transform');
    return sessionCookieKeys.x509Certificates();
  });

  // The policy the SDK's validatePassword() checks against, and that sign-up and password changes meet when enforced.
  app.get('/identitytoolkit.googleapis.com/v2/passwordPolicy', async (request) => {
    // A tenant's policy when the SDK's auth.tenantId is set (it sends ?tenantId=).
    const config = await projects.config(callers.fromApiKey(request).realm);
    return passwordPolicyResponse(config.passwordPolicyConfig);
  });
  // reCAPTCHA Enterprise is off for every provider: the SDK then never loads Google's script.
  app.get('/identitytoolkit.googleapis.com/v2/recaptchaConfig', async (request) => {
    const projectId = projectOf(callers.fromApiKey(request).realm);
    return {
      recaptchaKey: `projects/${projectId}/keys/hearth-no-recaptcha`,
      recaptchaEnforcementState: [
        { provider: 'EMAIL_PASSWORD_PROVIDER', enforcementState: 'OFF' },
        { provider: 'PHONE_PROVIDER', enforcementState: 'OFF' },
      ],
      useSmsBotScore: false,
      useSmsTollFraudProtection: false,
    };
  });

  // The site key RecaptchaVerifier renders with: Hearth's stand-in (/__/auth/recaptcha.js) fetches its challenges with it.
  const recaptchaParams = async (request: FastifyRequest) => {
    // Site keys are the project's: its tenants' pages solve the same challenges.
    const projectId = projectOf(callers.fromApiKey(request).realm);
    return { kind: 'identitytoolkit#GetRecaptchaParamResponse', recaptchaSiteKey: services.humanCheck.siteKey(projectId) };
  };
  app.get(`${v1Prefix}/recaptchaParams`, recaptchaParams);
  app.get(`${v3Prefix}/getRecaptchaParam`, recaptchaParams);
}
