import { exportJWK, importJWK, type JWK } from 'jose';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import type { KeyRingStore } from '../../storage/key-ring-store.js';
import { KeyRingFile } from '../../storage/key-ring-file.js';

/**
 * The certificate builder, loaded with the first key made: some two hundred modules (a tenth of a
 * CPU second) a server that only reads its keys, or never signs, does not need.
 */
async function loadX509(): Promise<typeof import('@peculiar/x509')> {
  // @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API first.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as ReturnType<typeof x509.cryptoProvider.get>);
  return x509;
}

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
 * The token signing keys: the first made when first needed (a token signed or the key set asked
 * for: a server that never signs skips the RSA key generation, a fifth of a second of CPU, which
 * the test suite's hundreds of servers paid twice each), kept in the data folder (mode 0600) or in
 * the shared database, rotated. A new key is published `prepublishMs` before it signs anything, so
 * verifiers that cache the key set (for the max-age we advertise) know it in time; a retired key
 * stays published for `publishRetiredForMs` so the tokens it signed verify until they expire.
 * With several instances, whichever rotates first holds the ring's row lock; the others read its
 * keys at their next rotation check (every few minutes, well within `prepublishMs`) or as soon as
 * they meet a kid they do not know.
 */
export class SigningKeyRing {
  private keys: StoredKey[] = [];
  private active?: SigningKey;
  private readonly publicKeys = new Map<string, CryptoKey>();
  private lastReloadAt = 0;
  private makingFirst?: Promise<void>;

  private constructor(
    private readonly storage: KeyRingStore,
    private readonly options: KeyRotation,
  ) {}

  /** `storage`: a file path in the data folder, or a shared store. */
  static async open(storage: string | KeyRingStore, options: KeyRotation): Promise<SigningKeyRing> {
    const ring = new SigningKeyRing(typeof storage === 'string' ? new KeyRingFile(storage) : storage, options);
    await ring.rotateIfDue();
    return ring;
  }

  /**
   * Adds a key when the newest is due for replacement, drops keys no token can need, picks the
   * signer. An empty ring stays empty (another instance's first key is read) unless `makeFirst`.
   */
  async rotateIfDue(now = Date.now(), makeFirst = false): Promise<void> {
    const text = await this.storage.update(async (current) => {
      const keys = current === undefined ? [] : (JSON.parse(current) as StoredKey[]);
      if (keys.length === 0 && !makeFirst) return undefined;
      const next = await this.rotated(keys, now);
      return next === keys ? undefined : JSON.stringify(next);
    });
    this.keys = text === undefined ? [] : (JSON.parse(text) as StoredKey[]);
    if (this.keys.length === 0) return;
    // An instance that waited for another's first key can see it made a moment after its own `now`: it signs anyway.
    const signer = this.keys[Math.max(0, findLastIndex(this.keys, (key) => key.createdAt + this.options.prepublishMs <= now))]!;
    if (this.active?.kid !== signer.kid) {
      const privateKey = (await importJWK(signer.privateJwk, 'RS256')) as CryptoKey;
      this.active = { kid: signer.kid, privateKey, privateKeyObject: KeyObject.from(privateKey) };
    }
  }

  /** The ring after rotation at `now`: `keys` itself when nothing changes. */
  private async rotated(keys: StoredKey[], now: number): Promise<StoredKey[]> {
    const { rotateAfterMs, prepublishMs, publishRetiredForMs } = this.options;
    const newest = keys[keys.length - 1];
    let next = keys;
    if (!newest || now - newest.createdAt >= rotateAfterMs) {
      // The very first key signs at once: there is nothing cached to be out of date.
      next = [...keys, await generateKey(newest ? now : now - prepublishMs)];
    }
    const signsFrom = (key: StoredKey) => key.createdAt + prepublishMs;
    const activeIndex = findLastIndex(next, (key) => signsFrom(key) <= now);
    const kept = next.filter((key, index) => {
      const successor = next[index + 1];
      return index >= activeIndex || !successor || now - signsFrom(successor) < publishRetiredForMs;
    });
    return kept.length !== next.length ? kept : next;
  }

  /**
   * The next handover of signing as of `now`: a key already published that signs from a later
   * time, else the one the next rotation will publish (at the newest key's age limit, or at the
   * next check when that is past). For the console's warning: whatever pinned a certificate rather
   * than fetching the published keys must take the new one before it signs.
   */
  nextHandover(now: number): { publishedAt: number; signsFrom: number } {
    const { prepublishMs, rotateAfterMs } = this.options;
    const pending = this.keys.find((key) => key.createdAt + prepublishMs > now);
    if (pending) return { publishedAt: pending.createdAt, signsFrom: pending.createdAt + prepublishMs };
    const newest = this.keys[this.keys.length - 1];
    const publishedAt = Math.max(now, (newest?.createdAt ?? now) + rotateAfterMs);
    return { publishedAt, signsFrom: publishedAt + prepublishMs };
  }

  /** The key that signs now: the ring's first use makes its first key (one, whichever instance is first). */
  async signingKey(): Promise<SigningKey> {
    if (!this.active) await this.firstKey();
    if (!this.active) throw new Error('the signing key ring has no key');
    return this.active;
  }

  private firstKey(): Promise<void> {
    this.makingFirst ??= this.rotateIfDue(Date.now(), true).finally(() => {
      this.makingFirst = undefined;
    });
    return this.makingFirst;
  }

  /** Whether tokens signed with `kid` still verify: the key has not been retired and dropped. */
  isPublished(kid: string): boolean {
    return this.keys.some((key) => key.kid === kid);
  }

  /** Public keys by kid, for verification; imported once per key. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const key = this.keys.find((k) => k.kid === kid) ?? (await this.reloadFor(kid));
    if (!key) return undefined;
    let imported = this.publicKeys.get(kid);
    if (!imported) {
      imported = (await importJWK(key.publicJwk, 'RS256')) as CryptoKey;
      this.publicKeys.set(kid, imported);
    }
    return imported;
  }

  /**
   * `{kid: certificatePem}`, the shape of Google's x509 metadata endpoint. Never empty: a verifier
   * caches what it is given, so the first key is made before the set is published.
   */
  async x509Certificates(): Promise<Record<string, string>> {
    if (this.keys.length === 0) await this.firstKey();
    return Object.fromEntries(this.keys.map((k) => [k.kid, k.certificatePem]));
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    if (this.keys.length === 0) await this.firstKey();
    return { keys: this.keys.map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'RS256', use: 'sig' })) };
  }

  /**
   * A kid another instance may have just added: the shared ring is read again, at most once a
   * second, so made-up kids cannot turn every request into a database read.
   */
  private async reloadFor(kid: string): Promise<StoredKey | undefined> {
    const now = Date.now();
    if (!this.storage.shared || now - this.lastReloadAt < 1000) return undefined;
    this.lastReloadAt = now;
    const text = await this.storage.read();
    if (text !== undefined) this.keys = JSON.parse(text) as StoredKey[];
    return this.keys.find((k) => k.kid === kid);
  }
}

async function generateKey(now: number): Promise<StoredKey> {
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const kid = randomBytes(20).toString('hex');
  const x509 = await loadX509();
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
