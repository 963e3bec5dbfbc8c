import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writePrivateFileAtomically } from '../../storage/private-files.js';

/**
 * What a sealed value is for. Each purpose has its own key (derived from the one in the data
 * folder), so a value sealed for one purpose can never be passed off as another.
 */
export type SealPurpose = 'totp-secret' | 'totp-enrollment' | 'mfa-pending' | 'passkey-challenge';
/** What a keyed hash (mac) is for: its own derived key too. */
export type MacPurpose = 'recovery-code';

const version = 'v1';
const ivLength = 12;
const tagLength = 16;

/**
 * Authenticated encryption (AES-256-GCM) for the multi-factor secrets Hearth keeps or hands out:
 * TOTP shared secrets at rest, TOTP enrolment sessions and pending credentials in flight. The
 * `context` (project, account, ...) is bound as associated data: a sealed value moved to another
 * account or project does not open.
 */
export class SealingKeys {
  private readonly derived = new Map<SealPurpose | MacPurpose, Buffer>();

  private constructor(private readonly master: Buffer) {}

  /** The key kept in `file` (0600), made on first use. */
  static open(file: string): SealingKeys {
    if (!existsSync(file)) writePrivateFileAtomically(file, `${randomBytes(32).toString('base64url')}\n`);
    const master = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (master.length !== 32) throw new Error(`${file} does not hold a 32-byte key; delete it to have a new one made (enrolled TOTP factors then stop working).`);
    return new SealingKeys(master);
  }

  /** A master key kept elsewhere (the shared database, when several instances must open each other's seals). */
  static withMaster(master: Buffer): SealingKeys {
    if (master.length !== 32) throw new Error('the MFA sealing key must be 32 bytes');
    return new SealingKeys(master);
  }

  seal(purpose: SealPurpose, plaintext: string, context: string): string {
    const iv = randomBytes(ivLength);
    const cipher = createCipheriv('aes-256-gcm', this.key(purpose), iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${version}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The plaintext, or undefined for anything forged, damaged, or sealed for another purpose or context. */
  unseal(purpose: SealPurpose, sealed: string, context: string): string | undefined {
    if (!sealed.startsWith(`${version}.`)) return undefined;
    const raw = Buffer.from(sealed.slice(version.length + 1), 'base64url');
    if (raw.length < ivLength + tagLength) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key(purpose), raw.subarray(0, ivLength));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(ivLength, ivLength + tagLength));
      return Buffer.concat([decipher.update(raw.subarray(ivLength + tagLength)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }

  /** HMAC-SHA-256 of `data` under the purpose's own key (derived like the sealing keys), base64url. */
  mac(purpose: MacPurpose, data: string): string {
    return createHmac('sha256', this.key(purpose)).update(data).digest('base64url');
  }

  private key(purpose: SealPurpose | MacPurpose): Buffer {
    let key = this.derived.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.master, Buffer.alloc(0), `hearth-mfa-${purpose}`, 32));
      this.derived.set(purpose, key);
    }
    return key;
  }
}
