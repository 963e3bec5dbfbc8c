/**
 * Auth blocking functions (beforeUserCreated / beforeUserSignedIn): the identity domain asks
 * whatever is installed (the functions domain, above it) before an account is created by a client
 * and before a session starts, and applies the answer: display name, photo, disabled, email
 * verified, custom claims (kept on the account) and session claims (this sign-in's tokens only).
 * A refusal reaches the client as Google's BLOCKING_FUNCTION_ERROR_RESPONSE (the SDK's
 * auth/internal-error, with the function's message). Not asked for accounts the administrator makes.
 * beforeEmailSent / beforeSmsSent are asked before a password-reset or sign-in-link mail and before
 * an SMS code is sent; they can only refuse (a throw, or recaptchaActionOverride "BLOCK").
 */
import type { UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';

export type BlockingEventType = 'beforeCreate' | 'beforeSignIn';

export interface BlockingEvent {
  eventType: BlockingEventType;
  /** The realm key (a project, or `<project>/tenants/<tenant>`). */
  realm: string;
  user: UserRecord;
  /** Firebase's sign_in_method: password, emailLink, phone, google.com, anonymous, custom... */
  signInMethod: string;
  ipAddress?: string;
  locale?: string;
}

export type SendEventType = 'beforeSendEmail' | 'beforeSendSms';

/** A mail or SMS about to be sent (firebase-functions' emailType / smsType). */
export interface SendEvent {
  eventType: SendEventType;
  realm: string;
  email?: string;
  emailType?: 'EMAIL_SIGN_IN' | 'PASSWORD_RESET';
  phoneNumber?: string;
  smsType?: 'SIGN_IN_OR_SIGN_UP' | 'MULTI_FACTOR_SIGN_IN' | 'MULTI_FACTOR_ENROLLMENT';
  ipAddress?: string;
}

export interface BlockingAnswer {
  displayName?: string;
  photoUrl?: string;
  disabled?: boolean;
  emailVerified?: boolean;
  customClaims?: Record<string, unknown>;
  sessionClaims?: Record<string, unknown>;
}

/** What the functions domain installs; the identity domain holds it in a slot filled after assembly. */
export interface BlockingFunctions {
  has(eventType: BlockingEventType | SendEventType): boolean;
  /** The function's answer (undefined: nothing to change); throws the refusal as an ApiError. */
  call(event: BlockingEvent): Promise<BlockingAnswer | undefined>;
  /** Resolves when the mail or SMS may go; throws the refusal as an ApiError. */
  callBeforeSend(event: SendEvent): Promise<void>;
}

export interface BlockingSlot {
  current?: BlockingFunctions;
}

/** Claim names the ID token reserves (Google refuses them in custom claims too). */
const reservedClaims = new Set(['acr', 'amr', 'at_hash', 'aud', 'auth_time', 'azp', 'cnf', 'c_hash', 'exp', 'firebase', 'iat', 'iss', 'jti', 'nbf', 'nonce', 'sub']);

/** A function's refusal, as Google's Identity Toolkit words it. */
export function blockingRefusal(message: string) {
  return authError('BLOCKING_FUNCTION_ERROR_RESPONSE', `((${message.replace(/\)\)/g, ') )')}))`);
}

function checkClaims(claims: Record<string, unknown>, what: string): void {
  const reserved = Object.keys(claims).filter((name) => reservedClaims.has(name));
  if (reserved.length) throw blockingRefusal(`${what} may not use the reserved claims ${reserved.join(', ')}`);
  if (JSON.stringify(claims).length > 1000) throw blockingRefusal(`${what} are over 1000 characters`);
}

/** The account with the answer's changes (session claims are not the account's). */
export function applyBlockingAnswer(user: UserRecord, answer: BlockingAnswer | undefined): UserRecord {
  if (!answer) return user;
  const next: UserRecord = { ...user };
  if (answer.displayName !== undefined) next.displayName = answer.displayName;
  if (answer.photoUrl !== undefined) next.photoUrl = answer.photoUrl;
  if (answer.disabled !== undefined) next.disabled = answer.disabled;
  if (answer.emailVerified !== undefined) next.emailVerified = answer.emailVerified;
  if (answer.customClaims !== undefined) {
    checkClaims(answer.customClaims, 'Custom claims');
    next.customAttributes = JSON.stringify(answer.customClaims);
  }
  return next;
}

/** Developer claims (custom token) with the answer's session claims over them, as JSON text. */
export function withSessionClaims(developerClaims: string | undefined, answer: BlockingAnswer | undefined): string | undefined {
  if (!answer?.sessionClaims) return developerClaims;
  checkClaims(answer.sessionClaims, 'Session claims');
  const base = developerClaims ? (JSON.parse(developerClaims) as Record<string, unknown>) : {};
  return JSON.stringify({ ...base, ...answer.sessionClaims });
}

/** Google: "Anonymous and custom authentication don't support blocking functions." */
const unvetted = new Set(['anonymous', 'custom']);

/** Asks the installed function, if there is one for the event (never for anonymous and custom-token sessions). */
export async function askBlocking(slot: BlockingSlot | undefined, event: BlockingEvent): Promise<BlockingAnswer | undefined> {
  if (unvetted.has(event.signInMethod)) return undefined;
  const functions = slot?.current;
  if (!functions?.has(event.eventType)) return undefined;
  return functions.call(event);
}

/** Asks beforeEmailSent / beforeSmsSent, if installed, before a mail or SMS goes (throws the refusal). */
export async function askBeforeSend(slot: BlockingSlot | undefined, event: SendEvent): Promise<void> {
  const functions = slot?.current;
  if (functions?.has(event.eventType)) await functions.callBeforeSend(event);
}

/**
 * An account a client's first sign-in is about to make: beforeCreate, then beforeSignIn, as on
 * sign-up. The account to store, and the developer claims for its first tokens.
 */
export async function vetNewAccount(slot: BlockingSlot | undefined, event: Omit<BlockingEvent, 'eventType' | 'user'>, user: UserRecord): Promise<{ user: UserRecord; developerClaims: string | undefined }> {
  if (!slot?.current) return { user, developerClaims: undefined };
  const created = applyBlockingAnswer(user, await askBlocking(slot, { ...event, eventType: 'beforeCreate', user }));
  const session = await askBlocking(slot, { ...event, eventType: 'beforeSignIn', user: created });
  const vetted = applyBlockingAnswer(created, session);
  if (vetted.disabled) throw authError('USER_DISABLED');
  return { user: vetted, developerClaims: withSessionClaims(undefined, session) };
}
