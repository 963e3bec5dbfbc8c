import { createChallenge, randomInt, verifySolution, type Challenge, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Proof-of-work challenges (ALTCHA, altcha-lib) behind Hearth's reCAPTCHA stand-in.
 *
 * The scheme is ALTCHA's deterministic mode with PBKDF2/SHA-256, which browsers compute natively
 * through Web Crypto: the server picks a secret counter, derives the key for it once and publishes
 * the key's first half; the page tries counters from 0 up until its derived key starts with that
 * half, so its work is bounded (at most `maxCounter` derivations; a real browser takes well under
 * a second with the defaults) while issuing costs the server one derivation and checking an answer
 * one HMAC (the derived key is signed into the challenge). The challenge and that signature are
 * HMACs under a key private to this Hearth instance, so the server keeps no state per challenge;
 * its `data` names the project, so an answer buys a token for that project only.
 */
export interface ProofOfWorkCost {
  /** PBKDF2 iterations per derivation. */
  cost: number;
  /** The secret counter is drawn from [maxCounter / 2, maxCounter]: the page's work, in derivations. */
  maxCounter: number;
  /** How long a challenge may be answered. */
  challengeLifetimeMs: number;
}

export const defaultProofOfWorkCost: ProofOfWorkCost = { cost: 1_000, maxCounter: 1_000, challengeLifetimeMs: 5 * 60_000 };

const algorithm = 'PBKDF2/SHA-256';

/** Why an answer was refused, in the words of reCAPTCHA's own failure reasons. */
export type ProofRefusal = 'EXPIRED' | 'MALFORMED' | 'INVALID_SOLUTION';

export type ProofOutcome = { ok: true; projectId: string; expiresAt: number } | { ok: false; reason: ProofRefusal };

export class ProofOfWork {
  private readonly challengeSecret: string;
  private readonly derivedKeySecret: string;
  private readonly siteKeySecret: Buffer;

  /** `instanceKey`: random bytes private to this Hearth (see loadOrCreateCaptchaKey). */
  constructor(
    instanceKey: Buffer,
    private readonly difficulty: ProofOfWorkCost,
  ) {
    // Counters are 32-bit (altcha's uint32 mode): a larger bound would fail every challenge, so refuse it at start.
    if (!Number.isInteger(difficulty.maxCounter) || difficulty.maxCounter < 1 || difficulty.maxCounter > 0xffffffff) throw new Error(`captcha maxCounter must be a whole number from 1 to ${0xffffffff}`);
    if (!Number.isInteger(difficulty.cost) || difficulty.cost < 1) throw new Error('captcha cost must be a whole number of 1 or more');
    // Three independent secrets from one key: a leak of one use does not forge another.
    this.challengeSecret = subkey(instanceKey, 'challenge signature').toString('base64url');
    this.derivedKeySecret = subkey(instanceKey, 'derived key signature').toString('base64url');
    this.siteKeySecret = subkey(instanceKey, 'site key');
  }

  /**
   * The project's site key: its id and a MAC, so a site key Hearth never handed out (through
   * getRecaptchaParam, which needs the project's API key) gets no challenge, without a lookup.
   */
  siteKey(projectId: string): string {
    return `${Buffer.from(projectId).toString('base64url')}.${this.siteKeyMac(projectId)}`;
  }

  /** The project a site key names, if it is one of ours. */
  projectOfSiteKey(siteKey: string): string | undefined {
    const [encodedProject, mac, ...rest] = siteKey.split('.');
    if (encodedProject === undefined || mac === undefined || rest.length > 0) return undefined;
    const projectId = Buffer.from(encodedProject, 'base64url').toString('utf8');
    const expected = Buffer.from(this.siteKeyMac(projectId));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? projectId : undefined;
  }

  async issue(projectId: string, now = Date.now()): Promise<Challenge> {
    const { cost, maxCounter, challengeLifetimeMs } = this.difficulty;
    return createChallenge({
      algorithm,
      cost,
      deriveKey,
      counter: randomInt(maxCounter, Math.ceil(maxCounter / 2)),
      // Rounded up: altcha counts seconds, and a challenge must not die before its lifetime.
      expiresAt: Math.ceil((now + challengeLifetimeMs) / 1000),
      data: { project: projectId },
      hmacSignatureSecret: this.challengeSecret,
      hmacKeySignatureSecret: this.derivedKeySecret,
    });
  }

  /** Checks an answer: signed by us, not expired, and the derived key is the one we signed. */
  async check(challenge: Challenge, solution: Solution): Promise<ProofOutcome> {
    let result;
    try {
      result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: this.challengeSecret, hmacKeySignatureSecret: this.derivedKeySecret });
    } catch {
      return { ok: false, reason: 'MALFORMED' }; // parameters altcha cannot even read
    }
    if (result.expired) return { ok: false, reason: 'EXPIRED' };
    if (result.invalidSignature) return { ok: false, reason: 'MALFORMED' };
    const project = challenge.parameters.data?.project;
    // Only challenges with a derived-key signature are issued: an answer checked any other way is refused.
    if (!result.verified || typeof project !== 'string' || !challenge.parameters.keySignature || challenge.parameters.expiresAt === undefined) {
      return { ok: false, reason: 'INVALID_SOLUTION' };
    }
    return { ok: true, projectId: project, expiresAt: challenge.parameters.expiresAt * 1000 };
  }

  private siteKeyMac(projectId: string): string {
    return createHmac('sha256', this.siteKeySecret).update(projectId).digest('base64url').slice(0, 22);
  }
}

function subkey(instanceKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', instanceKey).update(`hearth captcha: ${purpose}`).digest();
}

