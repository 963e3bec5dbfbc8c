/**
 * --dev: ID tokens and session cookies in the form Google's Auth emulator issues them, which is
 * the only form firebase-admin accepts in emulator mode (FIREBASE_AUTH_EMULATOR_HOST set): its
 * EmulatorSignatureVerifier is jsonwebtoken's verify with `algorithms: ['none']` and no key, so the
 * header must say `alg: none` and the signature segment must be empty.
 *
 * Hearth still signs every token with its keys: the RS256 JWS is carried whole in the header as a
 * detached JWS (RFC 7515 appendix F: `<protected header>..<signature>`, under `hearth`), so Hearth's
 * own checks (its key, issuer, audience, expiry, revocation) hold for these tokens exactly as for
 * signed ones, and a made-up `alg: none` token is refused by the identity API as everywhere else.
 * Readers that ignore unknown header fields (firebase-admin, the SDKs, Google's emulators) see the
 * emulator's token. Never issued or accepted outside --dev.
 */

/** The header field that carries the detached JWS. */
const carrier = 'hearth';

interface EmulatorHeader {
  alg: 'none';
  typ: 'JWT';
  kid: string;
  [carrier]: string;
}

/** A compact RS256 JWS -> the emulator's unsigned form, its signature moved into the header. */
export function toEmulatorForm(signedJwt: string): string {
  const [protectedHeader, payload, signature] = signedJwt.split('.');
  const { kid } = JSON.parse(Buffer.from(protectedHeader!, 'base64url').toString('utf8')) as { kid: string };
  const header: EmulatorHeader = { alg: 'none', typ: 'JWT', kid, [carrier]: `${protectedHeader}..${signature}` };
  return `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${payload}.`;
}

/**
 * The signed JWS an emulator-form token carries (to be verified as any signed token is), or
 * undefined when `token` is not in that form.
 */
export function fromEmulatorForm(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[2] !== '') return undefined;
  let header: Partial<EmulatorHeader>;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Partial<EmulatorHeader>;
  } catch {
    return undefined;
  }
  if (header.alg !== 'none' || typeof header[carrier] !== 'string') return undefined;
  const detached = header[carrier].split('..');
  if (detached.length !== 2) return undefined;
  return `${detached[0]}.${parts[1]}.${detached[1]}`;
}
