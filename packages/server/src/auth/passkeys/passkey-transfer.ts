import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import type { PasskeyRecord } from '../../storage/passkey-records.js';
import { maxPasskeys } from './passkeys.js';

/**
 * Passkeys in and out of `hearth users export` / `hearth users import` (and accounts:batchCreate,
 * which the import runs through). Hearth's own field beside the Firebase CLI's: Google's export has
 * no passkeys, and firebase-admin's importUsers cannot send them. A passkey is its credential id,
 * its COSE public key and its counter: nothing in it is secret (the private key never left the
 * authenticator), so a copy moved to another Hearth on the same relying party id signs in there.
 */
export interface ExportedPasskey {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports?: string[];
  name?: string;
  /** Milliseconds since the epoch, as decimal text (as the export's createdAt). */
  createdAt: string;
  lastUsedAt?: string;
}

export function exportedPasskeys(passkeys: PasskeyRecord[]): ExportedPasskey[] {
  return passkeys.map((p) => ({
    credentialId: p.credentialId,
    publicKey: p.publicKey,
    counter: p.counter,
    ...(p.transports?.length ? { transports: [...p.transports] } : {}),
    ...(p.name ? { name: p.name } : {}),
    createdAt: String(p.createdAt),
    ...(p.lastUsedAt ? { lastUsedAt: String(p.lastUsedAt) } : {}),
  }));
}

const base64url = /^[A-Za-z0-9_-]+$/;
const maxCredentialIdLength = 1366; // 1023 bytes (WebAuthn's bound) in base64url
const maxPublicKeyLength = 2048;
const knownTransports = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

/** The passkeys of one imported account, or why they are refused (the account alone is then refused). */
export function importedPasskeys(given: unknown[], now: number): PasskeyRecord[] | string {
  if (given.length > maxPasskeys) return `an account holds at most ${maxPasskeys} passkeys`;
  const records: PasskeyRecord[] = [];
  for (const item of given) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return 'each passkeys entry must be an object';
    const entry = item as Record<string, unknown>;
    const { credentialId, publicKey, counter, transports, name } = entry;
    if (typeof credentialId !== 'string' || !base64url.test(credentialId) || credentialId.length > maxCredentialIdLength) return 'passkeys.credentialId must be base64url';
    if (records.some((r) => r.credentialId === credentialId)) return 'a passkey is given twice in this account';
    if (typeof publicKey !== 'string' || !base64url.test(publicKey) || publicKey.length > maxPublicKeyLength || !isCoseKey(publicKey)) return 'passkeys.publicKey must be a COSE public key in base64url';
    const count = counter === undefined || counter === null ? 0 : Number(counter);
    if (!Number.isSafeInteger(count) || count < 0 || count > 0xffffffff) return 'passkeys.counter must be a whole number from 0 to 2^32-1';
    const record: PasskeyRecord = { credentialId, publicKey, counter: count, createdAt: now };
    if (transports !== undefined && transports !== null) {
      if (!Array.isArray(transports) || transports.some((t) => typeof t !== 'string' || !knownTransports.has(t))) return `passkeys.transports must name WebAuthn transports (${[...knownTransports].join(', ')})`;
      if (transports.length) record.transports = [...new Set(transports as string[])];
    }
    if (name !== undefined && name !== null && name !== '') {
      if (typeof name !== 'string' || name.length > 256) return 'passkeys.name must be text of at most 256 characters';
      record.name = name;
    }
    for (const field of ['createdAt', 'lastUsedAt'] as const) {
      const value = entry[field];
      if (value === undefined || value === null) continue;
      const ms = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(ms) || ms < 0) return `passkeys.${field} must be milliseconds since the epoch`;
      record[field] = ms;
    }
    records.push(record);
  }
  return records;
}

/** Whether the text decodes to a COSE key map: a typo'd key would only fail at its owner's next sign-in. */
function isCoseKey(publicKey: string): boolean {
  try {
    const key = decodeCredentialPublicKey(new Uint8Array(Buffer.from(publicKey, 'base64url')));
    return key instanceof Map && key.has(3) && key.has(1);
  } catch {
    return false;
  }
}
