import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Store } from '../../storage/store.js';
import type { PhoneSignIn, PhoneSignInResult, SendVerificationCodeRequest, SignInWithPhoneNumberRequest } from '../phone/phone-sign-in.js';
import type { CallerResolver } from './caller.js';
import * as schemas from './schemas.js';

export interface PhoneServices {
  phone: PhoneSignIn;
  callers: CallerResolver;
  store: Store;
  /** In dev mode the emulator's verificationCodes list is open, as the Firebase emulator's is. */
  dev: boolean;
  /** Where texts go, for the outbox API: `outbox` (kept only), `provider`, or both. */
  delivery: 'outbox' | 'provider' | 'outbox+provider' | 'none';
}

const v1 = '/identitytoolkit.googleapis.com/v1';
const v3 = '/www.googleapis.com/identitytoolkit/v3/relyingparty';
const maxOutbox = 500;

const string = { type: ['string', 'null'] };
const ignored = {};

/** What the web, Android and iOS SDKs send; the app-check fields of the mobile SDKs are not used by Hearth. */
const sendVerificationCodeBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    phoneNumber: string,
    recaptchaToken: { type: ['string', 'null'], maxLength: 16_384 },
    captchaResponse: ignored,
    clientType: ignored,
    recaptchaVersion: ignored,
    playIntegrityToken: ignored,
    safetyNetToken: ignored,
    iosReceipt: ignored,
    iosSecret: ignored,
    autoRetrievalInfo: ignored,
    tenantId: string,
  },
};

const signInWithPhoneNumberBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sessionInfo: string,
    code: string,
    temporaryProof: string,
    phoneNumber: string,
    idToken: string,
    operation: { enum: ['VERIFY_OP_UNSPECIFIED', 'SIGN_UP_OR_IN', 'REAUTH', 'UPDATE', 'LINK', null] },
    verificationProof: ignored,
    returnSecureToken: ignored,
    clientType: ignored,
    tenantId: string,
  },
};

/** Phone sign-in (v1 and legacy v3 names), the Auth emulator's verificationCodes, and Hearth's SMS outbox. */
export function registerPhoneRoutes(app: FastifyInstance, services: PhoneServices): void {
  const { phone, callers, store } = services;

  const sendCode = async (request: FastifyRequest) => {
    const sessionInfo = await phone.sendVerificationCode(callers.fromApiKey(request), schemas.requestBody<SendVerificationCodeRequest>(request));
    return { sessionInfo };
  };
  app.post(`${v1}/accounts::sendVerificationCode`, { schema: { body: sendVerificationCodeBody } }, sendCode);
  app.post(`${v3}/sendVerificationCode`, { schema: { body: sendVerificationCodeBody } }, sendCode);

  const signIn = async (request: FastifyRequest) =>
    signInResponse(await phone.signIn(callers.fromApiKey(request), schemas.requestBody<SignInWithPhoneNumberRequest>(request)));
  app.post(`${v1}/accounts::signInWithPhoneNumber`, { schema: { body: signInWithPhoneNumberBody } }, signIn);
  app.post(`${v3}/verifyPhoneNumber`, { schema: { body: signInWithPhoneNumberBody } }, signIn);

  const adminRealm = (request: FastifyRequest) => callers.ownerOfPath(request, (request.params as { projectId: string }).projectId).realm;
  // A project's texts, and each tenant's at the same paths under /tenants/{t}.
  for (const [path, params] of schemas.realmPaths) {
    // What the Firebase emulator serves at this path, so its test helpers and the SDK's own suites work.
    app.get(`/emulator/v1${path}/verificationCodes`, { schema: { params } }, async (request) => {
      const messages = await store.listSmsOutbox(services.dev ? callers.realmOfPath(request) : adminRealm(request), maxOutbox);
      return { verificationCodes: messages.map((m) => ({ phoneNumber: m.phoneNumber, sessionInfo: m.sessionInfo, code: m.code })) };
    });

    const outboxPath = `/hearth/v1${path}/smsOutbox`;
    app.get(outboxPath, { schema: { params } }, async (request) => ({ messages: await store.listSmsOutbox(adminRealm(request), maxOutbox), delivery: services.delivery }));
    app.delete(outboxPath, { schema: { params } }, async (request) => {
      await store.commit([{ kind: 'clearSmsOutbox', projectId: adminRealm(request) }]);
      return {};
    });
  }
}

function signInResponse(result: PhoneSignInResult): Record<string, unknown> {
  if (result.kind === 'proof') {
    return { phoneNumber: result.phoneNumber, temporaryProof: result.temporaryProof, temporaryProofExpiresIn: result.temporaryProofExpiresIn };
  }
  return { localId: result.user.localId, isNewUser: result.isNewUser, phoneNumber: result.phoneNumber, ...result.tokens };
}
