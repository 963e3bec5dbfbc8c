import { createCipheriv, createHash, createHmac, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { requestErrors } from '../../http/api-error.js';
import { verifyBcrypt } from './bcrypt.js';

/**
 * Password hashes brought in by accounts:batchCreate (firebase-admin importUsers, `hearth users
 * import`), in the algorithms Firebase accepts. They are kept as they came, tagged with what
 * checking them needs, until the owner's first successful sign-in re-hashes the password with
 * Hearth's own scrypt (sessions.ts), as Firebase does.
 *
 * Stored form: `imported$ALGORITHM$name=value;name=value$salt$hash`, binary values in base64url.
 */

export const importHashAlgorithms = [
  'SCRYPT',
  'STANDARD_SCRYPT',
  'BCRYPT',
  'PBKDF2_SHA256',
  'PBKDF_SHA1',
  'HMAC_SHA512',
  'HMAC_SHA256',
  'HMAC_SHA1',
  'HMAC_MD5',
  'SHA512',
  'SHA256',
  'SHA1',
  'MD5',
] as const;
export type ImportHashAlgorithm = (typeof importHashAlgorithms)[number];

/** Which comes first in the hashed text; Firebase's defaults differ per family (see `defaultOrder`). */
export type PasswordHashOrder = 'SALT_AND_PASSWORD' | 'PASSWORD_AND_SALT';

export interface ImportHashOptions {
  algorithm: ImportHashAlgorithm;
  /** SCRYPT: the project's signer key; HMAC_*: the HMAC key. */
  signerKey?: Buffer;
  /** SCRYPT: appended to each user's salt. */
  saltSeparator?: Buffer;
  /** SCRYPT: scrypt's r (1..8); SHA*, MD5: hash applications; PBKDF*: iterations. */
  rounds?: number;
  /** SCRYPT: log2 of scrypt's N (1..14). */
  memoryCost?: number;
  /** STANDARD_SCRYPT: N, p, r and the derived key length. */
  cpuMemCost?: number;
  parallelization?: number;
  blockSize?: number;
  dkLen?: number;
  passwordHashOrder?: PasswordHashOrder;
}

/** The hash options of a batchCreate request, as the wire carries them (binary in web-safe base64). */
export interface WireHashOptions {
  hashAlgorithm?: string;
  signerKey?: string;
  saltSeparator?: string;
  /** Numbers may come as decimal text (the Firebase CLI passes its flags on as they were typed). */
  rounds?: number | string;
  memoryCost?: number | string;
  cpuMemCost?: number | string;
  parallelization?: number | string;
  blockSize?: number | string;
  dkLen?: number | string;
  passwordHashOrder?: string;
}

function isAlgorithm(name: string): name is ImportHashAlgorithm {
  return (importHashAlgorithms as readonly string[]).includes(name);
}

function wholeNumberIn(wire: number | string | undefined, min: number, max: number, what: string, algorithm: string): number {
  const value = typeof wire === 'string' && /^-?\d+$/.test(wire.trim()) ? Number(wire) : wire;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw requestErrors.invalidArgument(`${what} must be a whole number from ${min} to ${max} for ${algorithm}.`);
  }
  return value;
}

/** Reads the request's hash options, with the limits firebase-admin and the Firebase CLI apply. */
export function readHashOptions(wire: WireHashOptions): ImportHashOptions | undefined {
  if (wire.hashAlgorithm === undefined || wire.hashAlgorithm === '') return undefined;
  const algorithm = wire.hashAlgorithm.toUpperCase();
  if (!isAlgorithm(algorithm)) throw requestErrors.invalidArgument(`Unsupported hash algorithm ${wire.hashAlgorithm}.`);
  const options: ImportHashOptions = { algorithm };
  if (wire.passwordHashOrder !== undefined && wire.passwordHashOrder !== 'UNSPECIFIED_ORDER') {
    if (wire.passwordHashOrder !== 'SALT_AND_PASSWORD' && wire.passwordHashOrder !== 'PASSWORD_AND_SALT') {
      throw requestErrors.invalidArgument(`Unknown passwordHashOrder ${wire.passwordHashOrder}.`);
    }
    options.passwordHashOrder = wire.passwordHashOrder;
  }
  const signerKey = () => {
    const key = wire.signerKey ? decodeBase64(wire.signerKey) : undefined;
    if (!key?.length) throw requestErrors.invalidArgument(`A signerKey is required for ${algorithm}.`);
    return key;
  };
  switch (algorithm) {
    case 'SCRYPT':
      options.signerKey = signerKey();
      options.saltSeparator = wire.saltSeparator ? decodeBase64(wire.saltSeparator) : Buffer.alloc(0);
      options.rounds = wholeNumberIn(wire.rounds, 1, 8, 'rounds', algorithm);
      options.memoryCost = wholeNumberIn(wire.memoryCost, 1, 14, 'memoryCost', algorithm);
      break;
    case 'STANDARD_SCRYPT': {
      const n = wholeNumberIn(wire.cpuMemCost, 2, 1 << 20, 'cpuMemCost', algorithm);
      if ((n & (n - 1)) !== 0) throw requestErrors.invalidArgument(`cpuMemCost must be a power of two for ${algorithm}.`);
      options.cpuMemCost = n;
      options.blockSize = wholeNumberIn(wire.blockSize, 1, 32, 'blockSize', algorithm);
      options.parallelization = wholeNumberIn(wire.parallelization, 1, 64, 'parallelization', algorithm);
      options.dkLen = wholeNumberIn(wire.dkLen, 1, 1024, 'dkLen', algorithm);
      // Each sign-in pays this until the re-hash: bounded like one scrypt over 1 GiB.
      if (128 * n * options.blockSize * options.parallelization > 2 ** 30) {
        throw requestErrors.invalidArgument(`cpuMemCost × blockSize × parallelization is above 2^23 for ${algorithm}.`);
      }
      break;
    }
    case 'BCRYPT':
      break;
    case 'PBKDF2_SHA256':
    case 'PBKDF_SHA1':
      options.rounds = wholeNumberIn(wire.rounds, 0, 120000, 'rounds', algorithm);
      break;
    case 'HMAC_SHA512':
    case 'HMAC_SHA256':
    case 'HMAC_SHA1':
    case 'HMAC_MD5':
      options.signerKey = signerKey();
      break;
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
    case 'SHA512':
      options.rounds = wholeNumberIn(wire.rounds, algorithm === 'MD5' ? 0 : 1, 8192, 'rounds', algorithm);
      break;
  }
  return options;
}

/** Accepts standard and web-safe base64, as both reach us (firebase-admin sends web-safe). */
export function decodeBase64(text: string): Buffer {
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** The stored form of an imported hash (see the module comment). */
export function importedHash(options: ImportHashOptions, hash: Buffer, salt: Buffer): string {
  const params: string[] = [];
  const put = (name: string, value: Buffer | number | string | undefined) => {
    if (value === undefined) return;
    params.push(`${name}=${Buffer.isBuffer(value) ? value.toString('base64url') : String(value)}`);
  };
  put('key', options.signerKey);
  put('sep', options.saltSeparator);
  put('rounds', options.rounds);
  put('mem', options.memoryCost);
  put('n', options.cpuMemCost);
  put('r', options.blockSize);
  put('p', options.parallelization);
  put('dklen', options.dkLen);
  put('order', options.passwordHashOrder);
  return ['imported', options.algorithm, params.join(';'), salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export interface StoredImportedHash {
  options: ImportHashOptions;
  salt: Buffer;
  hash: Buffer;
}

export function isImportedHash(stored: string): boolean {
  return stored.startsWith('imported$');
}

export function parseImportedHash(stored: string): StoredImportedHash | undefined {
  const [tag, algorithm, params, salt, hash] = stored.split('$');
  if (tag !== 'imported' || !algorithm || !isAlgorithm(algorithm) || params === undefined || salt === undefined || !hash) return undefined;
  const options: ImportHashOptions = { algorithm };
  for (const pair of params ? params.split(';') : []) {
    const at = pair.indexOf('=');
    const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
    if (name === 'key') options.signerKey = Buffer.from(value, 'base64url');
    else if (name === 'sep') options.saltSeparator = Buffer.from(value, 'base64url');
    else if (name === 'rounds') options.rounds = Number(value);
    else if (name === 'mem') options.memoryCost = Number(value);
    else if (name === 'n') options.cpuMemCost = Number(value);
    else if (name === 'r') options.blockSize = Number(value);
    else if (name === 'p') options.parallelization = Number(value);
    else if (name === 'dklen') options.dkLen = Number(value);
    else if (name === 'order') options.passwordHashOrder = value as PasswordHashOrder;
  }
  return { options, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** Checks a password against an imported hash; false for anything unreadable. */
export async function verifyImportedHash(password: string, stored: string): Promise<boolean> {
  const parsed = parseImportedHash(stored);
  if (!parsed) return false;
  const { options, salt, hash } = parsed;
  if (options.algorithm === 'BCRYPT') return verifyBcrypt(password, hash.toString('latin1'));
  // Other systems hashed the bytes the user typed; Hearth also tries the NFC form it hashes itself.
  const candidates = password.normalize('NFC') === password ? [password] : [password, password.normalize('NFC')];
  try {
    for (const candidate of candidates) {
      const computed = await computeImportedHash(options, Buffer.from(candidate, 'utf8'), salt, hash.length);
      if (matches(computed, hash)) return true;
    }
  } catch {
    return false; // parameters this machine cannot compute with: nothing can match
  }
  return false;
}

/** Equal digests, or a stored hash that is the digest's hex text (as some exports keep MD5 and SHA). */
function matches(computed: Buffer, stored: Buffer): boolean {
  if (computed.length === stored.length) return timingSafeEqual(computed, stored);
  const hex = Buffer.from(computed.toString('hex'), 'latin1');
  if (hex.length !== stored.length) return false;
  return timingSafeEqual(hex, Buffer.from(stored.toString('latin1').toLowerCase(), 'latin1'));
}

/** The hash of `password` under `options`; `length` is the stored hash's, for the derivations that take one. */
export async function computeImportedHash(options: ImportHashOptions, password: Buffer, salt: Buffer, length: number): Promise<Buffer> {
  switch (options.algorithm) {
    case 'SCRYPT':
      return firebaseScrypt(password, salt, options);
    case 'STANDARD_SCRYPT':
      return scryptAsync(password, salt, options.dkLen ?? length, { N: options.cpuMemCost!, r: options.blockSize!, p: options.parallelization! });
    case 'PBKDF2_SHA256':
    case 'PBKDF_SHA1':
      return pbkdf2Async(password, salt, Math.max(options.rounds ?? 1, 1), length || 64, options.algorithm === 'PBKDF2_SHA256' ? 'sha256' : 'sha1');
    case 'HMAC_SHA512':
    case 'HMAC_SHA256':
    case 'HMAC_SHA1':
    case 'HMAC_MD5':
      return createHmac(digestOf(options.algorithm), options.signerKey!).update(ordered(options, password, salt)).digest();
    case 'SHA512':
    case 'SHA256':
    case 'SHA1':
    case 'MD5': {
      const digest = digestOf(options.algorithm);
      let hash = createHash(digest).update(ordered(options, password, salt)).digest();
      // rounds counts applications of the hash; MD5's 0 means one, like 1.
      for (let round = 1; round < (options.rounds ?? 1); round++) hash = createHash(digest).update(hash).digest();
      return hash;
    }
    case 'BCRYPT':
      throw new Error('bcrypt hashes are checked by verifyBcrypt');
  }
}

/**
 * Firebase's modified scrypt (github.com/firebase/scrypt): scrypt of the password with the user's
 * salt followed by the salt separator (N = 2^memoryCost, r = rounds, p = 1, 64 bytes); the first 32
 * bytes are an AES-256-CTR key (zero IV) that encrypts the project's signer key, giving the hash.
 */
export async function firebaseScrypt(password: Buffer, salt: Buffer, options: ImportHashOptions): Promise<Buffer> {
  const saltWithSeparator = Buffer.concat([salt, options.saltSeparator ?? Buffer.alloc(0)]);
  const derived = await scryptAsync(password, saltWithSeparator, 64, { N: 2 ** options.memoryCost!, r: options.rounds!, p: 1 });
  const cipher = createCipheriv('aes-256-ctr', derived.subarray(0, 32), Buffer.alloc(16));
  return Buffer.concat([cipher.update(options.signerKey!), cipher.final()]);
}

/** HMAC keys the password followed by the salt; plain digests take the salt first (Firebase's defaults). */
function ordered(options: ImportHashOptions, password: Buffer, salt: Buffer): Buffer {
  const order = options.passwordHashOrder ?? (options.algorithm.startsWith('HMAC_') ? 'PASSWORD_AND_SALT' : 'SALT_AND_PASSWORD');
  return order === 'SALT_AND_PASSWORD' ? Buffer.concat([salt, password]) : Buffer.concat([password, salt]);
}

function digestOf(algorithm: ImportHashAlgorithm): string {
  if (algorithm.endsWith('SHA512')) return 'sha512';
  if (algorithm.endsWith('SHA256')) return 'sha256';
  if (algorithm.endsWith('SHA1')) return 'sha1';
  return 'md5';
}

function scryptAsync(password: Buffer, salt: Buffer, length: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, { ...params, maxmem: 129 * params.N * params.r * params.p + 1024 * 1024 + 128 * params.N * params.r }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

function pbkdf2Async(password: Buffer, salt: Buffer, iterations: number, length: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, length, digest, (error, key) => (error ? reject(error) : resolve(key)));
  });
}
