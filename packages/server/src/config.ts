import { resolve } from 'node:path';
import { defaultHumanCheckOptions, type HumanCheckOptions } from './auth/captcha/human-check.js';
import type { OobLifetimes } from './auth/core/oob-codes.js';
import { defaultSignUpLimits, type SignUpLimits } from './auth/core/signup-limit.js';
import type { ThrottleLimits } from './auth/core/throttle.js';
import { defaultSmsCodeOptions, defaultSmsLimits, type SmsCodeOptions, type SmsLimits } from './auth/phone/codes.js';
import type { TwilioOptions } from './auth/phone/twilio-sender.js';

export interface HearthOptions {
  port: number;
  host: string;
  /** Folder for the SQLite file, the signing keys and the admin key. */
  dataDir: string;
  /**
   * `postgres://…` (`--database-url` or HEARTH_DATABASE_URL): keep everything in PostgreSQL instead of
   * the SQLite file, so that several Hearth processes can serve one project (storage/postgres/).
   */
  databaseUrl?: string;
  /** Development mode: any API key names the default project and `Bearer owner` is an admin. */
  dev: boolean;
  /** The project that unknown API keys (dev) and the web app use. */
  defaultProjectId: string;
  /** Overrides the admin key kept in the data folder. */
  adminKey?: string;
  /** Built web app to serve at `/`; undefined serves none. */
  webRoot?: string;
  logLevel: string;
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
  /** The origin action links point at; defaults to the address Hearth listens on. */
  publicUrl?: string;
  /** Run the built-in demo OpenID provider on this port and offer it as `oidc.demo`. */
  demoIdpPort?: number;
  /** Composite indexes for the document database, in firestore.indexes.json form. */
  indexesFile?: string;
  /** Values allowed in an `in` / `array-contains-any` filter (30 today; 10 for old clients). */
  maxInValues: number;
  /** How long replaced and deleted document versions stay readable at a past `readTime` (Firestore: 1 hour). */
  versionRetentionSeconds: number;
  /** Also serve gRPC (the Node SDKs' transport) on this port; it is always served on `port` too. */
  grpcPort?: number;
  /** `--rules FILE`: the default project's Firestore security rules, released at start and on every change. */
  rulesFile?: string;
  /**
   * Released to the default project outside --dev when it has no rules yet and no --rules is
   * given: the web app's own rules (each user reads and writes only users/{uid}/...).
   */
  shippedRulesFile?: string;
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
  /** Tests only: holds the SQLite document writer thread before COMMIT (holdForTest in sqlite-writer-thread.ts). */
  sqliteWriterLatch?: Int32Array;
  /** How often the console's metrics series is sampled (5000 ms; tests shorten it). */
  metricsIntervalMs?: number;
}

export const defaultWebRoot = resolve(import.meta.dirname, '../../web/dist');
export const defaultShippedRulesFile = resolve(import.meta.dirname, '../../web/firestore.rules');

export function defaultOptions(overrides: Partial<HearthOptions> = {}): HearthOptions {
  return {
    port: 9000,
    host: '127.0.0.1',
    dataDir: resolve('.hearth'),
    dev: false,
    defaultProjectId: 'demo-hearth',
    webRoot: defaultWebRoot,
    logLevel: 'info',
    recentLoginSeconds: 5 * 60,
    accountThrottle: { maxFailures: 10, windowMs: 15 * 60_000 },
    addressThrottle: { maxFailures: 100, windowMs: 15 * 60_000 },
    mailThrottle: { maxFailures: 10, windowMs: 60 * 60_000 },
    emailEnumerationProtection: true,
    emulatorActionLinks: false,
    signUpLimits: defaultSignUpLimits,
    oobLifetimes: { defaultMs: 3600_000, emailSignInMs: 6 * 3600_000 },
    maxInValues: 30,
    captcha: defaultHumanCheckOptions,
    smsOutbox: false,
    smsCodes: defaultSmsCodeOptions,
    smsLimits: defaultSmsLimits,
    versionRetentionSeconds: 3600,
    ...overrides,
  };
}
