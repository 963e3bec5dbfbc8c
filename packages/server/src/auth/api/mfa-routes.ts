import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../core/requests.js';
import type { MfaEnrollmentService } from '../mfa/mfa-enrollment.js';
import type { FinalizeMfaEnrollmentRequest, FinalizeMfaSignInRequest, StartMfaEnrollmentRequest, StartMfaSignInRequest, WithdrawMfaRequest } from '../mfa/mfa-requests.js';
import type { MfaSignInService } from '../mfa/mfa-sign-in.js';
import type { RecoveryCodeService } from '../mfa/recovery-codes.js';
import type { CallerResolver } from './caller.js';
import { body, requestBody } from './schemas.js';

export interface MfaServices {
  enrollment: MfaEnrollmentService;
  signIn: MfaSignInService;
  callers: CallerResolver;
  /** Hearth's recoveryCodes:generate and :lookup (docs/IDENTITY.md). */
  recoveryCodes?: RecoveryCodeService;
}

type JsonSchema = Record<string, unknown>;
// proto3 JSON: null is "not set" at every depth; the core treats null and absent alike.
const text: JsonSchema = { type: ['string', 'null'] };
const ignored: JsonSchema = {};
function nested(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: ['object', 'null'], properties, additionalProperties: false };
}
/** What the SDKs send beside a reCAPTCHA token (the Android and iOS proofs are not checked by Hearth). */
const appProofs = { captchaResponse: ignored, clientType: ignored, recaptchaVersion: ignored, safetyNetToken: ignored, playIntegrityToken: ignored, iosReceipt: ignored, iosSecret: ignored, autoRetrievalInfo: ignored };
const phoneVerificationInfo = nested({ sessionInfo: text, code: text });

const startEnrollmentBody = body({
  idToken: text,
  phoneEnrollmentInfo: nested({ phoneNumber: text, recaptchaToken: text, ...appProofs }),
  totpEnrollmentInfo: nested({}),
});
const finalizeEnrollmentBody = body({
  idToken: text,
  displayName: text,
  phoneVerificationInfo,
  totpVerificationInfo: nested({ sessionInfo: text, verificationCode: text }),
});
const withdrawBody = body({ idToken: text, mfaEnrollmentId: text });
const startSignInBody = body({ mfaPendingCredential: text, mfaEnrollmentId: text, phoneSignInInfo: nested({ recaptchaToken: text, ...appProofs }) });
const finalizeSignInBody = body({ mfaPendingCredential: text, mfaEnrollmentId: text, phoneVerificationInfo, totpVerificationInfo: nested({ verificationCode: text }), recoveryCodeVerificationInfo: nested({ recoveryCode: text }) });

// `::` is Fastify's escape for the colon in `mfaEnrollment:start`.
const v2 = '/identitytoolkit.googleapis.com/v2/accounts';

/** The bodies by call, for the routes below and for tests that fuzz them. */
export const mfaBodySchemas: Record<string, JsonSchema> = {
  'mfaEnrollment:start': startEnrollmentBody,
  'mfaEnrollment:finalize': finalizeEnrollmentBody,
  'mfaEnrollment:withdraw': withdrawBody,
  'mfaSignIn:start': startSignInBody,
  'mfaSignIn:finalize': finalizeSignInBody,
  'recoveryCodes:generate': body({ idToken: text }),
  'recoveryCodes:lookup': body({ idToken: text }),
};

/** The v2 multi-factor calls (the SDK's multiFactor(user) and MultiFactorResolver). */
export function registerMfaRoutes(app: FastifyInstance, services: MfaServices): void {
  const { enrollment, signIn, callers } = services;
  const route = <T>(path: string, schema: JsonSchema, handle: (caller: Caller, request: T) => Promise<unknown>) =>
    app.post(`${v2}/${path.replace(':', '::')}`, { schema: { body: schema } }, (request: FastifyRequest) => handle(callers.fromApiKey(request), requestBody<T>(request)));
  const schema = (path: string) => mfaBodySchemas[path]!;
  route<StartMfaEnrollmentRequest>('mfaEnrollment:start', schema('mfaEnrollment:start'), (c, b) => enrollment.start(c, b));
  route<FinalizeMfaEnrollmentRequest>('mfaEnrollment:finalize', schema('mfaEnrollment:finalize'), (c, b) => enrollment.finalize(c, b));
  route<WithdrawMfaRequest>('mfaEnrollment:withdraw', schema('mfaEnrollment:withdraw'), (c, b) => enrollment.withdraw(c, b));
  route<StartMfaSignInRequest>('mfaSignIn:start', schema('mfaSignIn:start'), (c, b) => signIn.start(c, b));
  route<FinalizeMfaSignInRequest>('mfaSignIn:finalize', schema('mfaSignIn:finalize'), (c, b) => signIn.finalize(c, b));
  const { recoveryCodes } = services;
  if (recoveryCodes) {
    route<{ idToken?: string }>('recoveryCodes:generate', schema('recoveryCodes:generate'), (c, b) => recoveryCodes.generate(c, b));
    route<{ idToken?: string }>('recoveryCodes:lookup', schema('recoveryCodes:lookup'), (c, b) => recoveryCodes.lookup(c, b));
  }
}
