import { defaultHumanCheckOptions, type HumanCheckOptions } from './captcha/human-check.js';
import type { OobLifetimes } from './core/oob-codes.js';
import { defaultSignUpLimits, type SignUpLimits } from './core/signup-limit.js';
import type { ThrottleLimits } from './core/throttle.js';
import { defaultSmsCodeOptions, defaultSmsLimits, type SmsCodeOptions, type SmsLimits } from './phone/codes.js';
import type { TwilioOptions } from './phone/twilio-sender.js';

/** The identity server's settings (the flags of `hearth start` that concern it). */
export interface AuthOptions {
  host: string;
  /** Folder for the SQLite file, the signing keys and the admin key. */
  dataDir: string;
  /** Development mode: any API key names the default project and `Bearer owner` is an admin. */
  dev: boolean;
  /** The project that unknown API keys (dev) and the web app use. */
  defaultProjectId: string;
  /** Overrides the admin key kept in the data folder. */
  adminKey?: string;
  recentLoginSeconds: number;
  accountThrottle: ThrottleLimits;
  addressThrottle: ThrottleLimits;
  /** Accounts clients may create per address and per project (admins are not limited). */
  signUpLimits: SignUpLimits;
  /** Action mails per recipient address. */
  mailThrottle: ThrottleLimits;
  /** --dev: mailed links point at the Auth emulator's /emulator/action, as its oobCodes do (set by `hearth start --dev`). */
  emulatorActionLinks: boolean;
  /** Email enumeration protection of new projects: on, as new Firebase projects have it; off in --dev, as in the Auth emulator. */
  emailEnumerationProtection: boolean;
  oobLifetimes: OobLifetimes;
  /** Deliver mail by SMTP (`smtp://user:pass@host:port`); without it mail goes to the outbox. */
  smtpUrl?: string;
  /** Run the built-in demo OpenID provider on this port and offer it as `oidc.demo`. */
  demoIdpPort?: number;
  /** The reCAPTCHA stand-in: proof-of-work cost, challenge and token lifetimes, challenges per address. */
  captcha: HumanCheckOptions;
  /** A Twilio-style SMS provider (`--sms-account`, `--sms-from`, `--sms-url`, HEARTH_SMS_TOKEN). */
  sms?: TwilioOptions;
  /** Keep texts in the SMS outbox outside --dev too (always on in --dev); without it or a provider, no texts are sent. */
  smsOutbox: boolean;
  /** Lifetimes and tries of SMS codes and temporary proofs. */
  smsCodes: SmsCodeOptions;
  /** Texts per phone number and per client address. */
  smsLimits: SmsLimits;
  /**
   * Milliseconds since the epoch for multi-factor sign-in (pending credentials, TOTP enrolments and
   * codes); tests pass a shifted one to reach an expiry without waiting. Date.now by default.
   */
  clock?: () => number;
}

export const defaultAuthOptions = {
  recentLoginSeconds: 5 * 60,
  accountThrottle: { maxFailures: 10, windowMs: 15 * 60_000 },
  addressThrottle: { maxFailures: 100, windowMs: 15 * 60_000 },
  mailThrottle: { maxFailures: 10, windowMs: 60 * 60_000 },
  emailEnumerationProtection: true,
  emulatorActionLinks: false,
  signUpLimits: defaultSignUpLimits,
  oobLifetimes: { defaultMs: 3600_000, emailSignInMs: 6 * 3600_000 },
  captcha: defaultHumanCheckOptions,
  smsOutbox: false,
  smsCodes: defaultSmsCodeOptions,
  smsLimits: defaultSmsLimits,
} satisfies Partial<AuthOptions>;
