import { browserLocalPersistence, browserSessionPersistence, setPersistence, signOut, type Auth, type User } from 'firebase/auth';
import { keepForResume, type ResumableAction } from './pages/resume-store';

/**
 * Passkeys through Hearth's v2 calls (Identity Toolkit's passkeyEnrollment / passkeySignIn). The
 * released Firebase JS SDK has no passkey API, so this page calls the REST endpoints itself with the
 * app's API key (and the user's ID token from the SDK), and WebAuthn through navigator.credentials.
 *
 * A passkey sign-in answers an ID token and refresh token that the SDK has no public way to adopt
 * (its signInWithPasskey lives on an unreleased branch). The cleanest way with the released SDK:
 * sign out, leave the session where the SDK looks for a saved user at start (its
 * browserLocalPersistence entry, `firebase:authUser:<apiKey>:<app name>`, in the shape the SDK
 * writes), and load the next page. The SDK then adopts the session, checks it against the server
 * (accounts:lookup) and moves it to its preferred storage, as with any remembered sign-in.
 */

/** A passkey as accounts:lookup lists it. */
export interface PasskeyInfo {
  credentialId: string;
  name?: string;
  createdAt?: string;
  lastUsedAt?: string;
}

/** A passkey failure with an auth/* code, so the page's error sentences (auth-errors.ts) apply. */
class PasskeyError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const serverCodes: Record<string, string> = {
  PASSKEY_CREDENTIAL_NOT_FOUND: 'auth/passkey-not-found',
  CREDENTIAL_TOO_OLD_LOGIN_AGAIN: 'auth/requires-recent-login',
  USER_DISABLED: 'auth/user-disabled',
  TOO_MANY_ATTEMPTS_TRY_LATER: 'auth/too-many-requests',
  CREDENTIAL_ALREADY_IN_USE: 'auth/passkey-already-added',
  PASSKEY_LIMIT_EXCEEDED: 'auth/passkey-limit',
  INVALID_ORIGIN: 'auth/unauthorized-domain',
};

async function call(auth: Auth, path: string, body: Record<string, unknown>): Promise<any> {
  const url = `${window.location.origin}/identitytoolkit.googleapis.com/${path}?key=${encodeURIComponent(auth.app.options.apiKey ?? '')}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, ...(auth.tenantId ? { tenantId: auth.tenantId } : {}) }) });
  } catch {
    throw new PasskeyError('auth/network-request-failed', 'network');
  }
  const answer: any = await response.json().catch(() => ({}));
  if (response.ok) return answer;
  const message = String(answer?.error?.message ?? '').split(' ')[0] ?? '';
  throw new PasskeyError(serverCodes[message] ?? 'auth/passkey-refused', message);
}

const fromBase64url = (text: string): ArrayBuffer => {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
};
const toBase64url = (buffer: ArrayBuffer | null): string | undefined => {
  if (!buffer) return undefined;
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

/** Runs a WebAuthn ceremony; the browser's refusal (cancelled, timed out, no passkey) as auth/passkey-cancelled. */
async function ceremony<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DOMException) throw new PasskeyError('auth/passkey-cancelled', error.name);
    throw error;
  }
}

/** A passkey request the browser ended without a passkey (aborted, dismissed, refused): no server answer in it. */
export function noPasskeyPicked(error: unknown): boolean {
  return error instanceof PasskeyError && error.code === 'auth/passkey-cancelled';
}

export function passkeysSupported(): boolean {
  return typeof window.PublicKeyCredential === 'function' && typeof navigator.credentials?.create === 'function';
}

/** The signed-in user's passkeys. */
export async function listPasskeys(auth: Auth, user: User): Promise<PasskeyInfo[]> {
  const answer = await call(auth, 'v1/accounts:lookup', { idToken: await user.getIdToken() });
  return (answer.users?.[0]?.passkeyInfo ?? []) as PasskeyInfo[];
}

/** Makes a passkey on this device for the signed-in user, under `name`. */
export async function addPasskey(auth: Auth, user: User, name: string): Promise<void> {
  const idToken = await user.getIdToken();
  const { credentialCreationOptions: o } = await call(auth, 'v2/accounts/passkeyEnrollment:start', { idToken });
  const publicKey: PublicKeyCredentialCreationOptions = {
    ...o,
    challenge: fromBase64url(o.challenge),
    user: { ...o.user, id: fromBase64url(o.user.id) },
    excludeCredentials: (o.excludeCredentials ?? []).map((c: { id: string; type: 'public-key'; transports?: AuthenticatorTransport[] }) => ({ ...c, id: fromBase64url(c.id) })),
  };
  const credential = (await ceremony(() => navigator.credentials.create({ publicKey }))) as PublicKeyCredential;
  const response = credential.response as AuthenticatorAttestationResponse;
  const authenticatorRegistrationResponse = {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: { clientDataJSON: toBase64url(response.clientDataJSON), attestationObject: toBase64url(response.attestationObject), transports: response.getTransports?.() ?? [] },
  };
  await call(auth, 'v2/accounts/passkeyEnrollment:finalize', { idToken, name, authenticatorRegistrationResponse });
}

export async function removePasskey(auth: Auth, user: User, credentialId: string): Promise<void> {
  await call(auth, 'v1/accounts:update', { idToken: await user.getIdToken(), deletePasskey: [credentialId] });
}

/** How a passkey request is made: by the user's click (modal), or offered in the email field's autofill. */
export interface PasskeyRequest {
  /** 'conditional': the browser offers the passkeys in the autofill of an `autocomplete="… webauthn"` field. */
  mediation?: 'conditional';
  /** Aborts the pending request (the page cancels autofill when the user picks another way). */
  signal?: AbortSignal;
  /** Called once the browser's request is over (a passkey picked, refused or aborted), before the server is asked. */
  onSettled?: () => void;
}

/** An assertion of a passkey the browser offers (none named: discoverable), with the account it names. */
interface Assertion {
  /** The user handle: the uid of the account the passkey was made for. */
  uid: string | undefined;
  response: Record<string, unknown>;
}

async function assertPasskey(auth: Auth, request: PasskeyRequest = {}): Promise<Assertion> {
  const { credentialRequestOptions: o } = await call(auth, 'v2/accounts/passkeySignIn:start', {}).catch((error: unknown) => {
    // The autofill asks on every visit to the sign-in page: a start refused there (an address over
    // its limit, say) offers no passkey rather than an error about something nobody asked for.
    throw request.mediation === 'conditional' ? new PasskeyError('auth/passkey-cancelled', 'no passkey offered') : error;
  });
  const publicKey: PublicKeyCredentialRequestOptions = { ...o, challenge: fromBase64url(o.challenge), allowCredentials: [] };
  const options: CredentialRequestOptions = { publicKey, ...(request.mediation ? { mediation: request.mediation } : {}), ...(request.signal ? { signal: request.signal } : {}) };
  let credential: PublicKeyCredential;
  try {
    credential = (await ceremony(() => navigator.credentials.get(options))) as PublicKeyCredential;
  } finally {
    request.onSettled?.();
  }
  const response = credential.response as AuthenticatorAssertionResponse;
  const userHandle = toBase64url(response.userHandle);
  return {
    uid: response.userHandle ? new TextDecoder().decode(response.userHandle) : undefined,
    response: {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        authenticatorData: toBase64url(response.authenticatorData),
        signature: toBase64url(response.signature),
        userHandle,
      },
    },
  };
}

interface PasskeyTokens {
  localId: string;
  idToken: string;
  refreshToken: string;
}

function finalizeSignIn(auth: Auth, assertion: Assertion): Promise<PasskeyTokens> {
  return call(auth, 'v2/accounts/passkeySignIn:finalize', { authenticatorAuthenticationResponse: assertion.response }) as Promise<PasskeyTokens>;
}

/**
 * Signs in with a passkey the browser offers (no email typed), then loads `returnTo`, where the
 * SDK adopts the new session. With `mediation: 'conditional'` the request waits in the email
 * field's autofill until the user picks a passkey there (or the signal aborts it: a DOMException
 * named AbortError, as passkey-cancelled).
 */
export async function signInWithPasskey(auth: Auth, returnTo: string, request: PasskeyRequest = {}): Promise<void> {
  const tokens = await finalizeSignIn(auth, await assertPasskey(auth, request));
  await signOut(auth);
  adoptSession(window.localStorage, auth, tokens);
  window.location.assign(returnTo);
}

/** Whether the browser can offer passkeys in autofill (WebAuthn conditional mediation). */
export async function passkeyAutofillAvailable(): Promise<boolean> {
  if (!passkeysSupported() || typeof PublicKeyCredential.isConditionalMediationAvailable !== 'function') return false;
  return PublicKeyCredential.isConditionalMediationAvailable().catch(() => false);
}

/**
 * "Confirm it's you" with a passkey: a passkey sign-in that must be the signed-in user's own.
 * Another account's passkey is refused before the server is asked (the user handle names its
 * account), so confirming can never switch accounts. The released SDK cannot take the new tokens
 * into its current user, so, as a mailed link does, the page keeps `action` for resuming, puts the
 * fresh session (the same user's) where the user was kept, and loads the account page that resumes
 * the change; the server counts a passkey sign-in as recent.
 */
export async function confirmWithPasskey(auth: Auth, user: User, action: ResumableAction): Promise<void> {
  const assertion = await assertPasskey(auth);
  if (assertion.uid !== user.uid) throw new PasskeyError('auth/passkey-other-account', 'another account');
  const tokens = await finalizeSignIn(auth, assertion);
  if (tokens.localId !== user.uid) throw new PasskeyError('auth/passkey-other-account', 'another account');
  const back = keepForResume(user.uid, action);
  // Where the SDK keeps this user now: "until I close the browser" stays in sessionStorage.
  const key = storageKey(auth);
  const inSession = window.sessionStorage.getItem(key) !== null;
  // Moves the user out of IndexedDB (searched first at start), so the page loads the new session.
  await setPersistence(auth, inSession ? browserSessionPersistence : browserLocalPersistence);
  adoptSession(inSession ? window.sessionStorage : window.localStorage, auth, tokens);
  window.location.assign(back);
}

const storageKey = (auth: Auth) => `firebase:authUser:${auth.app.options.apiKey}:${auth.app.name}`;

/** The session where the SDK's start looks for a remembered user (its own JSON shape of a User). */
function adoptSession(storage: Storage, auth: Auth, { localId: uid, idToken, refreshToken }: PasskeyTokens): void {
  const claims = JSON.parse(atob(idToken.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp: number; email?: string; email_verified?: boolean };
  const saved = {
    uid,
    email: claims.email,
    emailVerified: claims.email_verified ?? false,
    isAnonymous: false,
    providerData: [],
    stsTokenManager: { refreshToken, accessToken: idToken, expirationTime: claims.exp * 1000 },
    apiKey: auth.app.options.apiKey,
    appName: auth.app.name,
    ...(auth.tenantId ? { tenantId: auth.tenantId } : {}),
  };
  storage.setItem(storageKey(auth), JSON.stringify(saved));
}
