import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from '../core/requests.js';
import type { FinalizePasskeyEnrollmentRequest, FinalizePasskeySignInRequest, PasskeyService, StartPasskeyEnrollmentRequest } from '../passkeys/passkeys.js';
import type { CallerResolver } from './caller.js';
import { body, requestBody } from './schemas.js';

type JsonSchema = Record<string, unknown>;
const text: JsonSchema = { type: ['string', 'null'] };
/** An authenticator's response, in either of its two shapes (passkeys/passkey-responses.ts checks it). */
const authenticatorResponse: JsonSchema = { type: ['object', 'null'], maxProperties: 16 };

/** The bodies by call, for the routes below and for tests that fuzz them. */
export const passkeyBodySchemas: Record<string, JsonSchema> = {
  'passkeyEnrollment:start': body({ idToken: text }),
  'passkeyEnrollment:finalize': body({ idToken: text, authenticatorRegistrationResponse: authenticatorResponse, name: text, displayName: text }),
  'passkeySignIn:start': body({}),
  'passkeySignIn:finalize': body({ authenticatorAuthenticationResponse: authenticatorResponse, name: text, displayName: text }),
};

// `::` is Fastify's escape for the colon in `passkeySignIn:start`.
const v2 = '/identitytoolkit.googleapis.com/v2/accounts';
/** Authenticator responses are a few kilobytes; nothing bigger is read. */
const bodyLimit = 64 * 1024;

/** The v2 passkey calls (the JS SDK's unreleased passkey branch, and Hearth's web app). */
export function registerPasskeyRoutes(app: FastifyInstance, passkeys: PasskeyService, callers: CallerResolver): void {
  const route = <T>(path: string, handle: (caller: Caller, request: T) => Promise<unknown>) =>
    app.post(`${v2}/${path.replace(':', '::')}`, { bodyLimit, schema: { body: passkeyBodySchemas[path]! } }, (request: FastifyRequest) => handle(callers.fromApiKey(request), requestBody<T>(request)));
  route<StartPasskeyEnrollmentRequest>('passkeyEnrollment:start', (c, b) => passkeys.startEnrollment(c, b));
  route<FinalizePasskeyEnrollmentRequest>('passkeyEnrollment:finalize', (c, b) => passkeys.finalizeEnrollment(c, b));
  route<unknown>('passkeySignIn:start', (c) => passkeys.startSignIn(c));
  route<FinalizePasskeySignInRequest>('passkeySignIn:finalize', (c, b) => passkeys.finalizeSignIn(c, b));
}
