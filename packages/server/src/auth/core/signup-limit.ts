import { projectOf } from '../tenants/realm.js';
import { tooManyRequestsFromDevice } from '../errors.js';
import type { Store } from '../../storage/store.js';
import type { SignUpGate } from './auth-context.js';
import type { Caller } from './requests.js';
import { FailureThrottle, type ThrottleLimits } from './throttle.js';

/** How many accounts one client address, and one project from all addresses, may create per window. */
export interface SignUpLimits {
  perAddress: ThrottleLimits;
  perProject: ThrottleLimits;
}

/** Google's documented quota for new accounts: 100 per hour from one IP address. */
export const defaultSignUpLimits: SignUpLimits = {
  perAddress: { maxFailures: 100, windowMs: 60 * 60_000 },
  perProject: { maxFailures: 10_000, windowMs: 60 * 60_000 },
};

/**
 * Account creation by clients (accounts:signUp without an ID token: email and password, or a
 * guest; and the first sign-in by email link, identity provider or phone number, which creates the
 * account), counted per project and client address and per project, in the store so a restart does
 * not reset them. Only created accounts count: a refused sign-up (taken email, weak password) costs
 * nothing. Administrators (firebase-admin's createUser) are never limited.
 */
export class SignUpLimit implements SignUpGate {
  private constructor(
    private readonly perAddress: FailureThrottle,
    private readonly perProject: FailureThrottle,
  ) {}

  static async open(store: Store, limits: SignUpLimits): Promise<SignUpLimit> {
    return new SignUpLimit(await FailureThrottle.open(store, 'signup-address', limits.perAddress), await FailureThrottle.open(store, 'signup-project', limits.perProject));
  }

  /**
   * Runs `create` unless the caller's address or project is over its limit, and counts it once it
   * succeeded and `created` says it made an account (a sign-in that raced another into signing in
   * to that one made none).
   */
  async admit<Result>(caller: Caller, create: () => Promise<Result>, created: (result: Result) => boolean = () => true): Promise<Result> {
    if (caller.isAdmin) return create();
    const project = projectOf(caller.realm);
    const addressKey = `${project}\u0000${caller.clientIp}`;
    if (this.perAddress.isBlocked(addressKey) || this.perProject.isBlocked(project)) {
      throw tooManyRequestsFromDevice();
    }
    const result = await create();
    if (!created(result)) return result;
    this.perAddress.recordFailure(addressKey);
    this.perProject.recordFailure(project);
    return result;
  }

  /** Resolves once every count so far is in the store. */
  async flushed(): Promise<void> {
    await Promise.all([this.perAddress.flushed(), this.perProject.flushed()]);
  }
}
