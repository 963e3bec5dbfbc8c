import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import type * as FirebaseAuth from 'firebase/auth';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestHearth } from './hearth.js';

/**
 * The official SDK's browser build, loaded in Node: its Node build replaces the phone functions
 * (signInWithPhoneNumber, linkWithPhoneNumber, PhoneAuthProvider, ...) with stubs that throw, but the
 * browser build's work in Node once they are given an ApplicationVerifier (only RecaptchaVerifier
 * needs a DOM). A test file using it must not load `firebase/auth` too: the first build to load
 * registers the Auth component for every app.
 */
const require = createRequire(import.meta.url);
const nodeEntry = require.resolve('@firebase/auth'); // .../dist/node/index.js
export const browserAuth = (await import(pathToFileURL(join(dirname(nodeEntry), '../esm/index.js')).href)) as typeof FirebaseAuth;

/**
 * What RecaptchaVerifier is to the SDK: `verify` answers the token sendVerificationCode carries
 * (any non-empty one passes in --dev, as with Google's emulator). Counts its uses.
 */
export class TestVerifier implements FirebaseAuth.ApplicationVerifier {
  readonly type = 'recaptcha';
  verified = 0;

  constructor(private readonly token = 'dev-mode-token') {}

  async verify(): Promise<string> {
    this.verified++;
    return this.token;
  }

  /** The SDK resets its verifier after each use. */
  _reset(): void {}
}

/** Independent SDK clients (one app each, nothing persisted) of the browser build, pointed at a Hearth. */
export class PhoneSdkClients {
  private readonly apps: FirebaseApp[] = [];

  constructor(private readonly prefix: string) {}

  auth(server: Pick<TestHearth, 'url' | 'apiKey' | 'projectId'>): FirebaseAuth.Auth {
    const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId, authDomain: new URL(server.url).host }, `${this.prefix}-${this.apps.length}`);
    this.apps.push(app);
    const auth = browserAuth.initializeAuth(app, { persistence: browserAuth.inMemoryPersistence });
    browserAuth.connectAuthEmulator(auth, server.url, { disableWarnings: true });
    return auth;
  }

  async close(): Promise<void> {
    await Promise.all(this.apps.splice(0).map((app) => deleteApp(app)));
  }
}

interface VerificationCode {
  phoneNumber: string;
  sessionInfo: string;
  code: string;
}

/** The code sent for a sessionInfo (the SDK's verificationId), from the Auth emulator's list. */
export async function codeFor(server: Pick<TestHearth, 'url' | 'projectId'>, sessionInfo: string): Promise<string> {
  const response = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`);
  const { verificationCodes } = (await response.json()) as { verificationCodes: VerificationCode[] };
  const found = verificationCodes.find((entry) => entry.sessionInfo === sessionInfo);
  if (!found) throw new Error(`no code was sent for ${sessionInfo}`);
  return found.code;
}

/** A code that is not `code` (six digits). */
export function wrongCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

let numbers = 0;
/** A fresh number in the +1 555-01xx fictional range style (possible, never assigned). */
export function uniquePhoneNumber(): string {
  numbers++;
  return `+1555${String(process.pid % 1000).padStart(3, '0')}${String(numbers).padStart(4, '0')}`;
}
