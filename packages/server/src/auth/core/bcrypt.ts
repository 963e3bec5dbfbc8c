import { timingSafeEqual } from 'node:crypto';

/**
 * Checking bcrypt hashes (`$2a$`, `$2b$`, `$2y$`) for imported accounts, in TypeScript: node:crypto
 * has no bcrypt, and each imported hash is checked only until its owner's first sign-in re-hashes
 * the password with scrypt. Blowfish's initial state is the fractional digits of pi, computed once
 * (about 33,000 bits) rather than pasted in as 4 KiB of constants.
 */

const maxCost = 20;
const bcryptAlphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const base64Alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const hashPattern = /^\$2[aby]\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;
/** "OrpheanBeholderScryDoubt", the text bcrypt encrypts. */
const magic = Buffer.from('OrpheanBeholderScryDoubt', 'latin1');

let initialState: Uint32Array | undefined;

/** P-array (18 words) then the four S-boxes (4 × 256 words): pi's hex digits after the point. */
function blowfishInitialState(): Uint32Array {
  if (initialState) return initialState;
  const words = 18 + 1024;
  const bits = BigInt(words * 32);
  const guard = 64n;
  const scale = 1n << (bits + guard);
  const pi = 16n * arctanOfInverse(5n, scale) - 4n * arctanOfInverse(239n, scale);
  const fraction = (pi - 3n * scale) >> guard;
  const state = new Uint32Array(words);
  for (let i = 0; i < words; i++) state[i] = Number((fraction >> (bits - 32n * BigInt(i + 1))) & 0xffffffffn);
  initialState = state;
  return state;
}

/** arctan(1/x) × scale (Machin's series), exact to a few units of the last place. */
function arctanOfInverse(x: bigint, scale: bigint): bigint {
  let sum = 0n;
  let power = scale / x;
  const xSquared = x * x;
  for (let k = 1n, positive = true; power !== 0n; k += 2n, positive = !positive) {
    sum += positive ? power / k : -(power / k);
    power /= xSquared;
  }
  return sum;
}

class Blowfish {
  readonly p: Uint32Array;
  readonly s: Uint32Array;

  constructor() {
    const state = blowfishInitialState();
    this.p = state.slice(0, 18);
    this.s = state.slice(18);
  }

  /** Encrypts the two words at `block[offset]` in place. */
  encrypt(block: Uint32Array, offset: number): void {
    const p = this.p;
    let left = block[offset]! ^ p[0]!;
    let right = block[offset + 1]!;
    for (let i = 1; i <= 16; i += 2) {
      right ^= this.round(left) ^ p[i]!;
      left ^= this.round(right) ^ p[i + 1]!;
    }
    block[offset] = right ^ p[17]!;
    block[offset + 1] = left;
  }

  private round(x: number): number {
    const s = this.s;
    return (((s[x >>> 24]! + s[0x100 | ((x >>> 16) & 0xff)]!) ^ s[0x200 | ((x >>> 8) & 0xff)]!) + s[0x300 | (x & 0xff)]!) | 0;
  }

  /** Blowfish's key schedule mixed with a salt (EksBlowfish's ExpandKey); an empty salt is plain. */
  expand(key: Buffer, salt: Buffer | undefined): void {
    const keyWords = new WordStream(key);
    for (let i = 0; i < 18; i++) this.p[i] = this.p[i]! ^ keyWords.next();
    const saltWords = salt ? new WordStream(salt) : undefined;
    const block = new Uint32Array(2);
    const fill = (target: Uint32Array, length: number) => {
      for (let i = 0; i < length; i += 2) {
        if (saltWords) {
          block[0] = block[0]! ^ saltWords.next();
          block[1] = block[1]! ^ saltWords.next();
        }
        this.encrypt(block, 0);
        target[i] = block[0]!;
        target[i + 1] = block[1]!;
      }
    };
    fill(this.p, 18);
    fill(this.s, 1024);
  }
}

/** Big-endian words read cyclically from bytes. */
class WordStream {
  private offset = 0;
  constructor(private readonly bytes: Buffer) {}
  next(): number {
    let word = 0;
    for (let i = 0; i < 4; i++) {
      word = (word << 8) | this.bytes[this.offset]!;
      this.offset = (this.offset + 1) % this.bytes.length;
    }
    return word >>> 0;
  }
}

function decodeBcryptBase64(text: string, length: number): Buffer {
  let standard = '';
  for (const char of text) standard += base64Alphabet[bcryptAlphabet.indexOf(char)];
  return Buffer.from(standard, 'base64').subarray(0, length);
}

/** The 23 bytes bcrypt keeps, for a password (bytes, NUL-terminated, at most 72) and a 16-byte salt. */
export function bcryptDigest(password: Buffer, salt: Buffer, cost: number): Buffer {
  const key = Buffer.concat([password, Buffer.alloc(1)]).subarray(0, 72);
  const cipher = new Blowfish();
  cipher.expand(key, salt);
  for (let i = 0; i < 2 ** cost; i++) {
    cipher.expand(key, undefined);
    cipher.expand(salt, undefined);
  }
  const text = new Uint32Array(6);
  for (let i = 0; i < 6; i++) text[i] = magic.readUInt32BE(i * 4);
  for (let i = 0; i < 64; i++) for (let j = 0; j < 6; j += 2) cipher.encrypt(text, j);
  const out = Buffer.alloc(24);
  for (let i = 0; i < 6; i++) out.writeUInt32BE(text[i]!, i * 4);
  return out.subarray(0, 23);
}

/** A bcrypt hash string Hearth can check: `$2a$`, `$2b$` or `$2y$`, cost 4 to 20. */
export function isBcryptHash(hash: string): boolean {
  const parts = hashPattern.exec(hash);
  return parts !== null && Number(parts[1]) >= 4 && Number(parts[1]) <= maxCost;
}

/** Whether `password` matches a bcrypt hash string; false for malformed hashes or costs above 2^20. */
export function verifyBcrypt(password: string, hash: string): boolean {
  const parts = hashPattern.exec(hash);
  if (!parts || !isBcryptHash(hash)) return false;
  const cost = Number(parts[1]);
  const salt = decodeBcryptBase64(parts[2]!, 16);
  const expected = decodeBcryptBase64(parts[3]!, 23);
  const actual = bcryptDigest(Buffer.from(password, 'utf8'), salt, cost);
  return timingSafeEqual(actual, expected);
}

/** A bcrypt hash string (`$2b$`), for tests and tools that need to make one. */
export function bcryptHash(password: string, salt: Buffer, cost: number): string {
  const encode = (bytes: Buffer) => {
    let out = '';
    for (const char of bytes.toString('base64').replace(/=+$/, '')) out += bcryptAlphabet[base64Alphabet.indexOf(char)];
    return out;
  };
  const digest = bcryptDigest(Buffer.from(password, 'utf8'), salt, cost);
  return `$2b$${String(cost).padStart(2, '0')}$${encode(salt).slice(0, 22)}${encode(digest).slice(0, 31)}`;
}
