import type { IdTokenClaims } from '../../auth/core/tokens.js';
import { firestoreErrors } from '../core/errors.js';

/** Who sends a Firestore request: the admin credential, a signed-in user, or nobody. */
export type FirestoreCaller = { kind: 'admin' } | { kind: 'user'; claims: IdTokenClaims } | { kind: 'anonymous' };

export interface FirestoreAccessDeps {
  /** Is this `Authorization` header the admin credential? */
  isAdmin(authorization: string | undefined): boolean;
  verifyIdToken(projectId: string, token: string): Promise<IdTokenClaims>;
  /** Until security rules exist, signed-in users may use the database only in --dev. */
  openToUsers: boolean;
}

export class FirestoreAccess {
  constructor(private readonly deps: FirestoreAccessDeps) {}

  /** From the `Authorization` header, whichever transport carried it (HTTP, WebChannel's headers, gRPC metadata). */
  async callerOf(authorization: string | undefined, projectId: string): Promise<FirestoreCaller> {
    if (this.deps.isAdmin(authorization)) return { kind: 'admin' };
    if (!authorization) return { kind: 'anonymous' };
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw firestoreErrors.unauthenticated('Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    try {
      return { kind: 'user', claims: await this.deps.verifyIdToken(projectId, match[1]!) };
    } catch {
      // The SDK answers UNAUTHENTICATED by refreshing its token and trying again.
      throw firestoreErrors.unauthenticated('Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    }
  }

  /** Reads and writes of documents; refused to everyone but the admin until rules exist, except in --dev. */
  checkDataAccess(caller: FirestoreCaller): void {
    if (caller.kind === 'admin') return;
    if (caller.kind === 'user' && this.deps.openToUsers) return;
    throw firestoreErrors.permissionDenied();
  }

  /** Metadata operations (listCollectionIds, clearing a database) are for the admin only. */
  checkAdmin(caller: FirestoreCaller): void {
    if (caller.kind !== 'admin') throw firestoreErrors.permissionDeniedWith('Metadata operations require admin authentication.');
  }
}
