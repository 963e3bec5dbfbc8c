import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { authError } from '../errors.js';

/**
 * The two shapes of authenticator responses in circulation, both accepted:
 * - the JS SDK's passkey branch sends the W3C JSON form (`PublicKeyCredential.toJSON()`):
 *   `{id, rawId, type, response: {clientDataJSON, attestationObject | authenticatorData, signature, userHandle}}`;
 * - Google's discovery document names `{credentialId, credentialType, authenticatorAttestationResponse |
 *   authenticatorAssertionResponse: {clientDataJson, ...}}`, bytes in base64 (either alphabet).
 * Both become the W3C form @simplewebauthn/server verifies.
 */
export type RawResponse = Record<string, unknown>;

/** Longer fields than any authenticator sends are refused before any decoding. */
const maxFieldLength = 16_384;

export function registrationResponseOf(raw: unknown): RegistrationResponseJSON {
  const given = object(raw);
  const inner = object(given.response ?? given.authenticatorAttestationResponse);
  const id = credentialIdOf(given);
  const response: RegistrationResponseJSON['response'] = {
    clientDataJSON: bytes(inner.clientDataJSON ?? inner.clientDataJson, 'clientDataJSON'),
    attestationObject: bytes(inner.attestationObject, 'attestationObject'),
  };
  const transports = inner.transports;
  if (Array.isArray(transports) && transports.every((t) => typeof t === 'string' && t.length < 32) && transports.length <= 8) {
    response.transports = transports as RegistrationResponseJSON['response']['transports'];
  }
  return { id, rawId: id, type: 'public-key', response, clientExtensionResults: {} };
}

export function authenticationResponseOf(raw: unknown): AuthenticationResponseJSON {
  const given = object(raw);
  const inner = object(given.response ?? given.authenticatorAssertionResponse);
  const id = credentialIdOf(given);
  const response: AuthenticationResponseJSON['response'] = {
    clientDataJSON: bytes(inner.clientDataJSON ?? inner.clientDataJson, 'clientDataJSON'),
    authenticatorData: bytes(inner.authenticatorData, 'authenticatorData'),
    signature: bytes(inner.signature, 'signature'),
  };
  if (inner.userHandle !== undefined && inner.userHandle !== null && inner.userHandle !== '') response.userHandle = bytes(inner.userHandle, 'userHandle');
  return { id, rawId: id, type: 'public-key', response, clientExtensionResults: {} };
}

/** What the browser says it signed: the challenge and the page's origin (checked before the signature). */
export function clientDataOf(clientDataJSON: string): { challenge: string; origin: string; type: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    throw invalid('clientDataJSON is not JSON.');
  }
  const data = object(parsed);
  if (typeof data.challenge !== 'string' || typeof data.origin !== 'string' || typeof data.type !== 'string') throw invalid('clientDataJSON lacks its challenge, origin or type.');
  return { challenge: data.challenge, origin: data.origin, type: data.type };
}

function credentialIdOf(given: RawResponse): string {
  const id = given.id ?? given.rawId ?? given.credentialId;
  if (typeof id !== 'string' || id === '') throw authError('INVALID_CREDENTIAL_ID', 'The response names no credential.');
  if (id.length > 1400) throw authError('INVALID_CREDENTIAL_ID');
  const type = given.type ?? given.credentialType;
  if (type !== undefined && type !== null && type !== 'public-key' && type !== 'PUBLIC_KEY') throw invalid('Only public-key credentials are supported.');
  return base64url(id, 'id');
}

function object(value: unknown): RawResponse {
  if (value === undefined || value === null) throw authError('MISSING_AUTHENTICATOR_RESPONSE');
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('The authenticator response must be an object.');
  return value as RawResponse;
}

function bytes(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(`${name} is missing.`);
  return base64url(value, name);
}

/** base64 in either alphabet, padded or not, as base64url without padding. */
function base64url(value: string, name: string): string {
  if (value.length > maxFieldLength) throw invalid(`${name} is too long.`);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw invalid(`${name} is not base64.`);
  return value.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

function invalid(detail: string) {
  return authError('INVALID_AUTHENTICATOR_RESPONSE', detail);
}
