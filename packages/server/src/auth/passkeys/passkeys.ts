import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { passkeyIndexProvider, type PasskeyRecord } from '../../storage/passkey-records.js';
import { authenticate, requireRecentLogin, type AuthDeps } from '../core/auth-context.js';
import type { Caller } from '../core/requests.js';
import type { SessionService } from '../core/sessions.js';
import type { FailureThrottle } from '../core/throttle.js';
import { secondFactorOf } from '../core/tokens.js';
import { passkeyTakenMessage } from '../core/user-repository.js';
import { authError } from '../errors.js';
import { projectOf } from '../tenants/realm.js';
import type { PasskeyChallenges } from './challenges.js';
import { challengeLifetimeMs } from './challenges.js';
import { allowedOrigin, relyingPartyId } from './relying-party.js';
import { authenticationResponseOf, clientDataOf, registrationResponseOf } from './passkey-responses.js';

/** Passkeys per account: enough for every device a person has. */
export const maxPasskeys = 10;
const maxNameLength = 256;
/** What an ID token names as its sign_in_provider after a passkey sign-in (as Google's emulator does). */
export const passkeyProvider = 'passkey';

export interface PasskeyDeps {
  auth: AuthDeps;
  sessions: SessionService;
  challenges: PasskeyChallenges;
  /** Start calls per client address (each is a signature the server may be asked to check). */
  startThrottle: FailureThrottle;
  publicUrl: () => string;
}

export interface StartPasskeyEnrollmentRequest {
  idToken?: string;
}
export interface FinalizePasskeyEnrollmentRequest {
  idToken?: string;
  authenticatorRegistrationResponse?: unknown;
  name?: string;
  displayName?: string;
}
export interface FinalizePasskeySignInRequest {
  authenticatorAuthenticationResponse?: unknown;
}
export interface PasskeyTokens {
  localId: string;
  idToken: string;
  refreshToken: string;
}

/**
 * v2 accounts/passkeyEnrollment:start|finalize and passkeySignIn:start|finalize: WebAuthn
 * ceremonies verified with @simplewebauthn/server. Credentials are discoverable (resident) with
 * user verification required, so a passkey is a whole sign-in on its own: no email is typed and no
 * second factor is asked for. The user handle is the account's localId.
 */
export class PasskeyService {
  constructor(private readonly deps: PasskeyDeps) {}

  async startEnrollment(caller: Caller, request: StartPasskeyEnrollmentRequest): Promise<{ credentialCreationOptions: PublicKeyCredentialCreationOptionsJSON }> {
    this.throttleStart(caller);
    const { user, claims } = await authenticate(this.deps.auth, caller, request.idToken);
    requireRecentLogin(this.deps.auth, claims);
    const passkeys = user.passkeys ?? [];
    if (passkeys.length >= maxPasskeys) throw authError('PASSKEY_LIMIT_EXCEEDED', `An account holds at most ${maxPasskeys} passkeys.`);
    const userName = user.email ?? user.phoneNumber ?? user.localId;
    const options = await generateRegistrationOptions({
      rpName: projectOf(caller.realm),
      rpID: relyingPartyId(this.deps.publicUrl()),
      userName,
      userDisplayName: user.displayName ?? userName,
      userID: new TextEncoder().encode(user.localId),
      challenge: this.deps.challenges.issue(caller.realm, 'enroll', user),
      timeout: challengeLifetimeMs,
      attestationType: 'none',
      excludeCredentials: passkeys.map((p) => ({ id: p.credentialId, ...(p.transports ? { transports: p.transports } : {}) })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    return { credentialCreationOptions: options };
  }

  async finalizeEnrollment(caller: Caller, request: FinalizePasskeyEnrollmentRequest): Promise<PasskeyTokens> {
    const { user, claims } = await authenticate(this.deps.auth, caller, request.idToken);
    requireRecentLogin(this.deps.auth, claims);
    const name = checkName(request.name ?? request.displayName);
    const response = registrationResponseOf(request.authenticatorRegistrationResponse);
    const clientData = clientDataOf(response.response.clientDataJSON);
    const challenge = this.deps.challenges.read(caller.realm, 'enroll', clientData.challenge);
    if (challenge.localId !== user.localId || challenge.userCreatedAt !== user.createdAt) throw authError('INVALID_CHALLENGE', 'The challenge was issued to another account.');
    this.deps.challenges.checkUnused(user, challenge);
    const origin = await this.checkOrigin(caller, clientData.origin);
    const rpID = relyingPartyId(this.deps.publicUrl());
    let verified;
    try {
      verified = await verifyRegistrationResponse({ response, expectedChallenge: clientData.challenge, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true });
    } catch (error) {
      throw authError('INVALID_AUTHENTICATOR_RESPONSE', (error as Error).message);
    }
    if (!verified.verified) throw authError('INVALID_AUTHENTICATOR_RESPONSE', 'The attestation does not verify.');
    const { credential } = verified.registrationInfo;
    // A credential names one account (WebAuthn §7.1 step 22): a copy of another's registration is refused.
    // The store's index refuses it again if two enrolments race (user-repository.ts translates that).
    if (await this.deps.auth.users.getByFederatedId(caller.realm, passkeyIndexProvider, credential.id)) throw authError('CREDENTIAL_ALREADY_IN_USE', passkeyTakenMessage);
    const record: PasskeyRecord = {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      createdAt: Date.now(),
    };
    const transports = credential.transports ?? response.response.transports;
    if (transports?.length) record.transports = [...transports];
    if (name !== undefined) record.name = name;
    const provider = claims.firebase.sign_in_provider;
    const secondFactor = secondFactorOf(claims);
    const refresh = this.deps.auth.tokens.newRefreshToken(caller.realm, user, claims.auth_time, provider, undefined, secondFactor);
    const updated = await this.deps.auth.users.update(
      caller.realm,
      user.localId,
      (u) => {
        this.deps.challenges.checkUnused(u, challenge);
        const current = u.passkeys ?? [];
        if (current.some((p) => p.credentialId === record.credentialId)) throw authError('CREDENTIAL_ALREADY_IN_USE', passkeyTakenMessage);
        if (current.length >= maxPasskeys) throw authError('PASSKEY_LIMIT_EXCEEDED', `An account holds at most ${maxPasskeys} passkeys.`);
        return { ...u, passkeys: [...current, record], usedPasskeyChallenges: this.deps.challenges.markUsed(u, challenge) };
      },
      () => [refresh.mutation],
    );
    const tokens = await this.deps.sessions.tokensFor(caller.realm, updated, claims.auth_time, provider, refresh.token, undefined, secondFactor);
    return { localId: updated.localId, idToken: tokens.idToken, refreshToken: tokens.refreshToken };
  }

  /** No account is named: the authenticator offers the passkeys it holds for this relying party. */
  async startSignIn(caller: Caller): Promise<{ credentialRequestOptions: PublicKeyCredentialRequestOptionsJSON }> {
    this.throttleStart(caller);
    const options = await generateAuthenticationOptions({
      rpID: relyingPartyId(this.deps.publicUrl()),
      challenge: this.deps.challenges.issue(caller.realm, 'sign-in'),
      timeout: challengeLifetimeMs,
      userVerification: 'required',
    });
    return { credentialRequestOptions: options };
  }

  async finalizeSignIn(caller: Caller, request: FinalizePasskeySignInRequest): Promise<PasskeyTokens> {
    const response = authenticationResponseOf(request.authenticatorAuthenticationResponse);
    const clientData = clientDataOf(response.response.clientDataJSON);
    const challenge = this.deps.challenges.read(caller.realm, 'sign-in', clientData.challenge);
    const origin = await this.checkOrigin(caller, clientData.origin);
    const handle = response.response.userHandle;
    const localId = handle ? Buffer.from(handle, 'base64url').toString('utf8') : undefined;
    const user = localId ? await this.deps.auth.users.get(caller.realm, localId) : undefined;
    const passkey = user?.passkeys?.find((p) => p.credentialId === response.id);
    if (!user || !passkey) throw authError('PASSKEY_CREDENTIAL_NOT_FOUND', 'No account of this project holds this passkey.');
    if (user.disabled) throw authError('USER_DISABLED');
    this.deps.challenges.checkUnused(user, challenge);
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: clientData.challenge,
        expectedOrigin: origin,
        expectedRPID: relyingPartyId(this.deps.publicUrl()),
        credential: {
          id: passkey.credentialId,
          publicKey: bytesOf(Buffer.from(passkey.publicKey, 'base64url')),
          counter: passkey.counter,
          ...(passkey.transports ? { transports: passkey.transports as AuthenticatorTransport[] } : {}),
        },
        requireUserVerification: true,
      });
    } catch (error) {
      const message = (error as Error).message;
      // A counter that does not move forward means the credential was cloned (WebAuthn §6.1.1).
      if (/counter/i.test(message)) throw authError('INVALID_AUTHENTICATOR_RESPONSE', 'The signature counter did not increase: the authenticator may be cloned.');
      throw authError('INVALID_AUTHENTICATOR_RESPONSE', message);
    }
    if (!verified.verified) throw authError('INVALID_AUTHENTICATOR_RESPONSE', 'The assertion does not verify.');
    const newCounter = verified.authenticationInfo.newCounter;
    const now = Date.now();
    const { user: signedIn, tokens } = await this.deps.sessions.completeSignIn(caller.realm, user, passkeyProvider, {
      change: (u) => {
        this.deps.challenges.checkUnused(u, challenge);
        const current = u.passkeys?.find((p) => p.credentialId === passkey.credentialId);
        if (!current) throw authError('PASSKEY_CREDENTIAL_NOT_FOUND', 'No account of this project holds this passkey.');
        if ((current.counter > 0 || newCounter > 0) && newCounter <= current.counter) {
          throw authError('INVALID_AUTHENTICATOR_RESPONSE', 'The signature counter did not increase: the authenticator may be cloned.');
        }
        return {
          ...u,
          passkeys: (u.passkeys ?? []).map((p) => (p.credentialId === passkey.credentialId ? { ...p, counter: newCounter, lastUsedAt: now } : p)),
          usedPasskeyChallenges: this.deps.challenges.markUsed(u, challenge),
        };
      },
    });
    return { localId: signedIn.localId, idToken: tokens.idToken, refreshToken: tokens.refreshToken };
  }

  private throttleStart(caller: Caller): void {
    const key = caller.clientIp;
    if (this.deps.startThrottle.isBlocked(key)) throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many passkey requests from this address; try again later.');
    this.deps.startThrottle.recordFailure(key);
  }

  private async checkOrigin(caller: Caller, origin: string): Promise<string> {
    const { authorizedDomains } = await this.deps.auth.projects.config(caller.realm);
    if (!allowedOrigin(origin, this.deps.publicUrl(), authorizedDomains)) throw authError('INVALID_ORIGIN', `${origin.slice(0, 200)} may not use this project's passkeys.`);
    return origin;
  }
}

function checkName(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  if (name.length > maxNameLength) throw authError('INVALID_DISPLAY_NAME', `A passkey's name is at most ${maxNameLength} characters.`);
  return name;
}

/** The account's passkeys but the named ones (accounts:update's deletePasskey); each must be there. */
export function passkeysWithout(current: PasskeyRecord[], credentialIds: string[]): PasskeyRecord[] {
  for (const id of credentialIds) if (!current.some((p) => p.credentialId === id)) throw authError('PASSKEY_CREDENTIAL_NOT_FOUND', `The account has no passkey ${id.slice(0, 100)}.`);
  return current.filter((p) => !credentialIds.includes(p.credentialId));
}

/** The account's passkeys as lookup shows them (GoogleCloudIdentitytoolkitV1PasskeyInfo, with their times). */
export function passkeyInfoOf(passkeys: PasskeyRecord[]): { credentialId: string; name?: string; createdAt: string; lastUsedAt?: string }[] {
  return passkeys.map((p) => ({
    credentialId: p.credentialId,
    ...(p.name ? { name: p.name } : {}),
    createdAt: new Date(p.createdAt).toISOString(),
    ...(p.lastUsedAt ? { lastUsedAt: new Date(p.lastUsedAt).toISOString() } : {}),
  }));
}

/** A copy on its own ArrayBuffer, as @simplewebauthn's types ask. */
function bytesOf(buffer: Buffer): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(new ArrayBuffer(buffer.length));
  copy.set(buffer);
  return copy;
}
