import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { IdTokenClaims } from '../../auth/core/tokens.js';
import type { Peer } from '../../auth/api/functions-credential.js';
import { firestoreErrors } from '../core/errors.js';
import type { DatabaseId, DatabaseIdRule } from '../core/paths.js';
import type { FirestoreCaller, FirestoreGuard, RequestJudge } from '../security/guard.js';

export type { FirestoreCaller } from '../security/guard.js';

export interface FirestoreAccessDeps {
  /** Is this `Authorization` header an administrator of the project (the admin key, or a service account of it)? */
  isAdmin(authorization: string | undefined, projectId: string, peer?: Peer): boolean | Promise<boolean>;
  verifyIdToken(projectId: string, token: string): Promise<IdTokenClaims>;
  /**
   * --dev, like Google's emulator: unsigned ID tokens (`alg: none`, what @firebase/rules-unit-testing
   * and the SDKs' `mockUserToken` make) are taken at their word, and the emulator-only endpoints
   * (clearing a database) need no credential except from web pages on other origins. Never outside --dev.
   */
  dev: boolean;
  guard: FirestoreGuard;
  /** --dev: told once per pair of projects when an app's projectId is not the one its ID tokens were issued for. */
  warn?: (fields: Record<string, unknown>, message: string) => void;
}

/** Distinct project pairs reported before the log falls silent (a confused app repeats the same one). */
const maxMismatchesTold = 100;

const invalidCredentials = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.';

export class FirestoreAccess {
  constructor(private readonly deps: FirestoreAccessDeps) {}

  /** Database ids as Google's emulator takes them in --dev (`db1`), production's 4-63 rule otherwise. */
  get databaseIdRule(): DatabaseIdRule {
    return this.deps.dev ? 'emulator' : 'production';
  }

  /**
   * From the `Authorization` header, whichever transport carried it (HTTP, WebChannel's headers, gRPC
   * metadata); `consoleSession`: the request was made with the operator console's session
   * (console/console-access.ts decided), which is the administrator; `peer`: the connection, for the
   * functions worker's credential (auth/api/functions-credential.ts), which only counts from it.
   */
  async callerOf(authorization: string | undefined, projectId: string, consoleSession = false, peer?: Peer): Promise<FirestoreCaller> {
    if (consoleSession) return { kind: 'admin' };
    if (await this.deps.isAdmin(authorization, projectId, peer)) return { kind: 'admin' };
    if (!authorization) return { kind: 'anonymous' };
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw firestoreErrors.unauthenticated(invalidCredentials);
    const token = match[1]!;
    if (this.deps.dev) {
      const unsigned = unsignedClaims(token);
      if (unsigned) {
        this.noteProjectMismatch(unsigned, projectId);
        return { kind: 'user', claims: unsigned };
      }
    }
    try {
      return { kind: 'user', claims: await this.deps.verifyIdToken(projectId, token) };
    } catch {
      // The SDK answers UNAUTHENTICATED by refreshing its token and trying again.
      throw firestoreErrors.unauthenticated(invalidCredentials);
    }
  }

  private readonly mismatchesTold = new Set<string>();

  /**
   * --dev takes an unsigned ID token whatever project it names, as Google's emulators do; but an
   * app whose projectId is not Hearth's `--project` usually means a misconfiguration (its sign-ins
   * go to --project through any API key), so it is said once, clearly, in the log.
   */
  private noteProjectMismatch(claims: IdTokenClaims, projectId: string): void {
    const tokenProject = typeof claims.aud === 'string' ? claims.aud : undefined;
    if (!this.deps.warn || tokenProject === undefined || tokenProject === projectId) return;
    const pair = `${tokenProject}\u0000${projectId}`;
    if (this.mismatchesTold.has(pair) || this.mismatchesTold.size >= maxMismatchesTold) return;
    this.mismatchesTold.add(pair);
    this.deps.warn(
      { requestedProject: projectId, tokenProject },
      `Firestore request for project "${projectId}" with an ID token of project "${tokenProject}": the app's projectId differs from the project it signs in to (--project). Accepted in --dev, as Google's emulators do; set the app's projectId to "${tokenProject}" (or start Hearth with --project ${projectId}) to keep one project.`,
    );
  }

  /** The security rules' judge of this caller on this database. */
  judge(caller: FirestoreCaller, db: DatabaseId): RequestJudge {
    return this.deps.guard.judge(caller, db);
  }

  /** Metadata operations (listCollectionIds, clearing a database) are for the admin only. */
  checkAdmin(caller: FirestoreCaller): void {
    if (caller.kind !== 'admin') throw firestoreErrors.permissionDeniedWith('Metadata operations require admin authentication.');
  }

  /**
   * The emulator's own endpoints: open in --dev as Google's emulator's are (its SDK helpers send
   * no credential), except to pages on other origins; the admin's otherwise.
   */
  checkEmulatorEndpoint(caller: FirestoreCaller, fromForeignPage: boolean): void {
    if (this.deps.dev && !fromForeignPage) return;
    this.checkAdmin(caller);
  }
}

/** An `alg: none` JWT's claims, when it names a user; undefined for anything else. */
function unsignedClaims(token: string): IdTokenClaims | undefined {
  try {
    if (decodeProtectedHeader(token).alg !== 'none') return undefined;
    const claims = decodeJwt(token) as Partial<IdTokenClaims>;
    const uid = typeof claims.sub === 'string' && claims.sub ? claims.sub : typeof claims.user_id === 'string' ? claims.user_id : undefined;
    if (!uid) return undefined;
    return { ...claims, sub: uid } as IdTokenClaims;
  } catch {
    return undefined;
  }
}

