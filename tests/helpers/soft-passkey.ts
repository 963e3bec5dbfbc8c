/**
 * A software passkey for relying party `localhost` (P-256, attestation "none", user verification
 * claimed): what a browser's authenticator sends, made without a browser, for the passkey bench and
 * the kill -9 test. The virtual authenticator in Chromium (virtual-authenticator.ts) stays the one
 * the WebAuthn behaviour is tested with.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest();

/** One credential of a software authenticator for relying party `localhost`. */
export class SoftPasskey {
  readonly id = randomBytes(16);
  private readonly key: KeyObject;
  readonly cose: Uint8Array;
  private counter = 0;

  constructor(readonly localId: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.cose = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
  }

  register(challenge: string, origin: string): unknown {
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin, crossOrigin: false }));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.id.length);
    const authData = Buffer.concat([sha256('localhost'), Buffer.from([0x45]), Buffer.alloc(4), Buffer.alloc(16), idLength, this.id, this.cose]);
    const attestation = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return { id: b64(this.id), rawId: b64(this.id), type: 'public-key', response: { clientDataJSON: b64(clientData), attestationObject: b64(attestation), transports: ['internal'] }, clientExtensionResults: {} };
  }

  assert(challenge: string, origin: string): unknown {
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(++this.counter);
    const authData = Buffer.concat([sha256('localhost'), Buffer.from([0x05]), counter]);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.key);
    return { id: b64(this.id), rawId: b64(this.id), type: 'public-key', response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), userHandle: b64(Buffer.from(this.localId)) }, clientExtensionResults: {} };
  }
}

