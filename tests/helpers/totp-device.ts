import { Secret, TOTP } from 'otpauth';

export interface TotpFormat {
  algorithm: string;
  digits: number;
  period: number;
}

/**
 * An authenticator app for tests: makes codes from a shared secret (with the otpauth library, as
 * an app would), each for a later time step than the one before, since a server refuses a code
 * from a step it already accepted. `clock` is the server's (a shifted one in expiry tests).
 */
export class TotpDevice {
  private lastStep = -1;

  constructor(
    readonly secretKey: string,
    private readonly format: TotpFormat = { algorithm: 'SHA1', digits: 6, period: 30 },
    private readonly clock: () => number = Date.now,
  ) {}

  /** A fresh code: the current step, or the one after the last code made (at most a few steps ahead). */
  next(): string {
    const current = Math.floor(this.clock() / 1000 / this.format.period);
    const step = Math.max(current, this.lastStep + 1);
    if (step - current > 4) throw new Error('the test used more TOTP codes than the window lets ahead');
    this.lastStep = step;
    return this.codeAt(step);
  }

  /** The code of the step `offset` steps from now (negative: the past). */
  codeFromNow(offset: number): string {
    return this.codeAt(Math.floor(this.clock() / 1000 / this.format.period) + offset);
  }

  /** The code of the step last handed out by next(): what a replaying attacker would send. */
  lastCode(): string {
    return this.codeAt(this.lastStep);
  }

  private codeAt(step: number): string {
    return TOTP.generate({ secret: Secret.fromBase32(this.secretKey), ...this.format, timestamp: step * this.format.period * 1000 });
  }
}

/** A code that is none of the codes of the 41 steps around now: certainly wrong. */
export function wrongCode(device: TotpDevice, digits = 6): string {
  const near = new Set(Array.from({ length: 41 }, (_, i) => device.codeFromNow(i - 20)));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(digits, '0');
    if (!near.has(code)) return code;
  }
}
