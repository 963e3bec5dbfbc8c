// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { exportJWK, importJWK, type JWK } from 'jose';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { closeSync, existsSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

x509.cryptoProvider.set(webcrypto as unknown as ReturnType<typeof x509.cryptoProvider.get>);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** One RS256 key as kept on disk: the private JWK never leaves this module but for signing. */
interface StoredKey {
  kid: string;
  createdAt: number;
  privateJwk: JWK;
  publicJwk: JWK;
  certificatePem: string;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The same key for node:crypto's sign, which skips WebCrypto's per-call overhead (ID tokens). */
  privateKeyObject: KeyObject;
}

export interface KeyRotation {
  rotateAfterMs: number;
  prepublishMs: number;
  publishRetiredForMs: number;
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };

/**
 * The token signing keys: generated on first start, kept in the data folder (mode 0600), rotated.
 * A new key is published `prepublishMs` before it signs anything, so verifiers that cache the key
 * set (for the max-age we advertise) know it in time; a retired key stays published for
 * `publishRetiredForMs` so the tokens it signed verify until they expire.
 */
export class SigningKeyRing {
  private keys: StoredKey[] = [];
  private active?: SigningKey;
  private readonly publicKeys = new Map<string, CryptoKey>();

  private constructor(
    private readonly file: string,
    private readonly options: KeyRotation,
  ) {}

  static async open(file: string, options: KeyRotation): Promise<SigningKeyRing> {
    const ring = new SigningKeyRing(file, options);
    if (existsSync(file)) ring.keys = JSON.parse(readFileSync(file, 'utf8')) as StoredKey[];
    await ring.rotateIfDue();
    return ring;
  }

  /** Adds a key when the newest is due for replacement, drops keys no token can need, picks the signer. */
  async rotateIfDue(now = Date.now()): Promise<void> {
    const { rotateAfterMs, prepublishMs, publishRetiredForMs } = this.options;
    const newest = this.keys[this.keys.length - 1];
    let changed = false;
    if (!newest || now - newest.createdAt >= rotateAfterMs) {
      // The very first key signs at once: there is nothing cached to be out of date.
      this.keys.push(await generateKey(newest ? now : now - prepublishMs));
      changed = true;
    }
    const signsFrom = (key: StoredKey) => key.createdAt + prepublishMs;
    const activeIndex = findLastIndex(this.keys, (key) => signsFrom(key) <= now);
    const kept = this.keys.filter((key, index) => {
      const successor = this.keys[index + 1];
      return index >= activeIndex || !successor || now - signsFrom(successor) < publishRetiredForMs;
    });
    if (kept.length !== this.keys.length) changed = true;
    this.keys = kept;
    if (changed) this.save();
    const signer = this.keys[findLastIndex(this.keys, (key) => signsFrom(key) <= now)]!;
    if (this.active?.kid !== signer.kid) {
      const privateKey = (await importJWK(signer.privateJwk, 'RS256')) as CryptoKey;
      this.active = { kid: signer.kid, privateKey, privateKeyObject: KeyObject.from(privateKey) };
    }
  }

  signingKey(): SigningKey {
    if (!this.active) throw new Error('signing key ring is not loaded');
    return this.active;
  }

  /** Whether tokens signed with `kid` still verify: the key has not been retired and dropped. */
  isPublished(kid: string): boolean {
    return this.keys.some((key) => key.kid === kid);
  }

  /** Public keys by kid, for verification; imported once per key. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) return undefined;
    let imported = this.publicKeys.get(kid);
    if (!imported) {
      imported = (await importJWK(key.publicJwk, 'RS256')) as CryptoKey;
      this.publicKeys.set(kid, imported);
    }
    return imported;
  }

  /** `{kid: certificatePem}`, the shape of Google's x509 metadata endpoint. */
  x509Certificates(): Record<string, string> {
    return Object.fromEntries(this.keys.map((k) => [k.kid, k.certificatePem]));
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'RS256', use: 'sig' })) };
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    writePrivateFileAtomically(this.file, JSON.stringify(this.keys));
  }
}

/**
 * Writes a secret file (mode 0600) so that after a crash or a full disk it holds either its old
 * contents or the new ones, never a prefix: a temporary file is written and fsynced, renamed over
 * the target, and the folder fsynced so the rename itself is durable. An empty admin key left by a
 * torn first start once made every caller an administrator.
 */
export function writePrivateFileAtomically(file: string, contents: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = openSync(temporary, 'w', 0o600);
  try {
    fchmodSync(handle, 0o600); // a stale temporary file from a crash keeps its old mode otherwise
    writeFileSync(handle, contents);
    fsyncSync(handle);
  } catch (error) {
    closeSync(handle);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(handle);
  renameSync(temporary, file);
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

async function generateKey(now: number): Promise<StoredKey> {
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const kid = randomBytes(20).toString('hex');
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(8).toString('hex'),
    name: 'CN=securetoken.system.gserviceaccount.com',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    signingAlgorithm: algorithm,
    keys,
  });
  return {
    kid,
    createdAt: now,
    privateJwk: await exportJWK(keys.privateKey),
    publicJwk: await exportJWK(keys.publicKey),
    certificatePem: certificate.toString('pem'),
  };
}
