import { holdsOperatorClaim, operatorClaim } from '../auth/core/operator-claim.js';
import type { IdTokenClaims } from '../auth/core/tokens.js';
import type { UserRecord } from '../storage/store.js';

export interface OperatorAccountDeps {
  /** The default project: operator accounts are its own accounts, not a tenant's. */
  projectId: string;
  verifyIdToken(projectId: string, token: string): Promise<IdTokenClaims>;
  getUser(projectId: string, localId: string): Promise<UserRecord | undefined>;
}

/**
 * How an operator may have signed in for the console: with its password (or an email link, which
 * Firebase names the same), or its phone number. Not with a custom token, which a service account
 * of the default project signs for any account, nor with an identity provider, whose settings the
 * same service account may change: service accounts administer their own project, never the
 * console (auth/core/operator-claim.ts keeps the accounts themselves out of their reach).
 */
const consoleSignInProviders = new Set(['password', 'phone']);

/**
 * The operator an ID token signs in, or undefined: an account of the default project whose claims
 * say `hearthOperator: true`, both in the token and on the account as stored now, so taking the
 * claim away, disabling the account or revoking its tokens ends its way into the console at once.
 */
export async function operatorOfIdToken(deps: OperatorAccountDeps, idToken: string): Promise<string | undefined> {
  let claims: IdTokenClaims;
  try {
    claims = await deps.verifyIdToken(deps.projectId, idToken);
  } catch {
    return undefined;
  }
  if ((claims as Record<string, unknown>)[operatorClaim] !== true) return undefined;
  if (!consoleSignInProviders.has(claims.firebase.sign_in_provider)) return undefined;
  const user = await deps.getUser(deps.projectId, claims.sub);
  if (!user || user.disabled || claims.iat < user.validSince) return undefined;
  if (!holdsOperatorClaim(user.customAttributes)) return undefined;
  return user.email ?? user.localId;
}
