import type { UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { SecondFactorGate } from '../mfa/gate.js';
import type { ProjectDirectory } from './project-config.js';
import type { Caller } from './requests.js';
import type { FailureThrottle, SignInThrottle } from './throttle.js';
import type { IdTokenClaims, TokenService } from './tokens.js';
import type { UserRepository } from './user-repository.js';

export interface AuthOptions {
  /** Changing email or password, or deleting the account, needs a sign-in this recent. */
  recentLoginSeconds: number;
}

/** Told after an owner's email changed by any route, so the old address gets a way back. */
export type EmailChangedHook = (caller: Caller, user: UserRecord, oldEmail: string) => void;

/** What every identity operation works with. */
import type { BlockingSlot } from './blocking-functions.js';

export interface AuthDeps {
  users: UserRepository;
  tokens: TokenService;
  projects: ProjectDirectory;
  accountThrottle: FailureThrottle;
  addressThrottle: FailureThrottle;
  /** Failed sign-ins kept in the store; without it, one in memory from the two limits above. */
  signInThrottle?: SignInThrottle;
  options: AuthOptions;
  onEmailChanged: EmailChangedHook;
  /** Multi-factor: asks accounts with second factors for one before a sign-in completes. */
  secondFactors?: SecondFactorGate;
  /**
   * Counts accounts clients create by signing in (email link, identity provider, phone) against
   * the same per-address and per-project limits as accounts:signUp; without it, nothing is counted.
   */
  signUps?: SignUpGate;
  /** Auth blocking functions (beforeCreate, beforeSignIn), filled by the functions domain when it runs a code base. */
  blocking?: BlockingSlot;
}

/** Runs an account's creation unless the caller is over its sign-up limit, and counts it once made. */
export interface SignUpGate {
  admit<Result>(caller: Caller, create: () => Promise<Result>, created?: (result: Result) => boolean): Promise<Result>;
}

/** Creates an account through the sign-up limit when there is one. */
export function admitSignUp<Result>(deps: AuthDeps, caller: Caller, create: () => Promise<Result>, created?: (result: Result) => boolean): Promise<Result> {
  return deps.signUps ? deps.signUps.admit(caller, create, created) : create();
}

export interface Authenticated {
  claims: IdTokenClaims;
  user: UserRecord;
}

/** The user an ID token speaks for, refusing revoked, disabled and deleted accounts. */
export async function authenticate(deps: AuthDeps, caller: Caller, idToken: string | undefined): Promise<Authenticated> {
  if (!idToken) throw authError('MISSING_ID_TOKEN');
  const claims = await deps.tokens.verifyIdToken(caller.realm, idToken);
  const user = await deps.users.get(caller.realm, claims.sub);
  if (!user) throw authError('USER_NOT_FOUND');
  if (claims.iat < user.validSince) throw authError('TOKEN_EXPIRED');
  if (user.disabled) throw authError('USER_DISABLED');
  return { claims, user };
}

export function requireAdmin(caller: Caller): void {
  if (!caller.isAdmin) throw authError('ADMIN_ONLY_OPERATION');
}

/**
 * An owner replacing the account's existing email (by any route) is a sensitive change: it needs a
 * recent sign-in, as updateEmail does, and the old address is told (with a way back).
 */
export function guardEmailReplacement(deps: AuthDeps, claims: IdTokenClaims, current: UserRecord, email: string): boolean {
  if (!current.email || current.email === email) return false;
  if (claims.firebase.sign_in_provider !== 'anonymous') requireRecentLogin(deps, claims);
  return true;
}

export function requireRecentLogin(deps: AuthDeps, claims: IdTokenClaims, now = Math.floor(Date.now() / 1000)): void {
  if (now - claims.auth_time > deps.options.recentLoginSeconds) throw authError('CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
}
