import type { IdTokenClaims } from '../auth/core/tokens.js';
import type { UserRecord } from '../storage/store.js';

export interface OperatorAccountDeps {
  /** The default project: operator accounts are its own accounts, not a tenant's. */
  projectId: string;
  verifyIdToken(projectId: string, token: string): Promise<IdTokenClaims>;
  getUser(projectId: string, localId: string): Promise<UserRecord | undefined>;
}

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
  if ((claims as Record<string, unknown>).hearthOperator !== true) return undefined;
  const user = await deps.getUser(deps.projectId, claims.sub);
  if (!user || user.disabled || claims.iat < user.validSince) return undefined;
  if (storedClaims(user).hearthOperator !== true) return undefined;
  return user.email ?? user.localId;
}

function storedClaims(user: UserRecord): Record<string, unknown> {
  if (!user.customAttributes) return {};
  try {
    const parsed: unknown = JSON.parse(user.customAttributes);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
