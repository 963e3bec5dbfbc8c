/**
 * v1 Auth triggers (functions.auth.user().onCreate / onDelete): each account the identity domain
 * makes or deletes (its UserRepository) raises a trigger event per matching function, delivered
 * like the others (retries, set aside, leases), as Google's Auth emulator sends them: the account
 * in firebase-admin's UserRecord wire shape, the legacy event type, `projects/{p}` as resource.
 * The events are stored in the account's own commit (the fn_events table lives in the same SQLite
 * file or PostgreSQL database as the accounts): a sign-up acknowledged to its client always has
 * its onCreate, and a kill -9 loses neither.
 */
import { randomUUID } from 'node:crypto';
import type { AccountChange, AccountChangeRecorder } from '../auth/core/user-repository.js';
import type { UserRecord } from '../storage/store.js';
import type { TriggerEventMutation } from '../storage/trigger-events.js';
import type { WorkerEventBody } from './firestore-event-shapes.js';
import type { FunctionEndpoint } from './manifest.js';

const eventTypes: Record<AccountChange['kind'], string> = {
  create: 'providers/firebase.auth/eventTypes/user.create',
  delete: 'providers/firebase.auth/eventTypes/user.delete',
};

export interface AuthEventPayload {
  source: 'auth';
  eventType: string;
  projectId: string;
  user: Record<string, unknown>;
}

/** The account's custom claims as stored (a JSON object), or undefined when it has none or they do not parse. */
export function storedCustomClaims(user: UserRecord): unknown {
  if (!user.customAttributes) return undefined;
  try {
    return JSON.parse(user.customAttributes) as unknown;
  } catch {
    return undefined;
  }
}

/** The account as firebase-admin's UserRecord JSON names it (what v1 userRecordConstructor reads). */
export function userRecordWire(user: UserRecord): Record<string, unknown> {
  const customClaims = storedCustomClaims(user);
  return {
    uid: user.localId,
    ...(user.email !== undefined ? { email: user.email } : {}),
    emailVerified: user.emailVerified,
    ...(user.displayName !== undefined ? { displayName: user.displayName } : {}),
    ...(user.photoUrl !== undefined ? { photoURL: user.photoUrl } : {}),
    ...(user.phoneNumber !== undefined ? { phoneNumber: user.phoneNumber } : {}),
    disabled: user.disabled,
    metadata: { creationTime: new Date(user.createdAt).toUTCString(), ...(user.lastLoginAt ? { lastSignInTime: new Date(user.lastLoginAt).toUTCString() } : {}) },
    providerData: user.providerUserInfo.map((info) => ({
      providerId: info.providerId,
      uid: info.rawId,
      ...(info.email !== undefined ? { email: info.email } : {}),
      ...(info.displayName !== undefined ? { displayName: info.displayName } : {}),
      ...(info.photoUrl !== undefined ? { photoURL: info.photoUrl } : {}),
      ...(info.phoneNumber !== undefined ? { phoneNumber: info.phoneNumber } : {}),
    })),
    ...(customClaims !== undefined ? { customClaims } : {}),
    ...(user.tenantId ? { tenantId: user.tenantId } : {}),
  };
}

export function authEventBody(id: string, payload: AuthEventPayload, at: number): WorkerEventBody {
  return {
    signature: 'event',
    data: payload.user,
    context: { eventId: id, timestamp: new Date(at).toISOString(), eventType: payload.eventType, resource: `projects/${payload.projectId}`, params: {} },
  };
}

/**
 * What the functions domain gives the identity domain's repository, or undefined when no function
 * listens to accounts (then account commits carry nothing more and nothing is read for them).
 */
export function authTriggerRecorder(projectId: string, endpoints: readonly FunctionEndpoint[], raised: () => void): AccountChangeRecorder | undefined {
  const targets = new Map<string, string[]>();
  for (const endpoint of endpoints) {
    if (endpoint.kind.type !== 'auth') continue;
    targets.set(endpoint.kind.eventType, [...(targets.get(endpoint.kind.eventType) ?? []), endpoint.name]);
  }
  if (!targets.size) return undefined;
  return {
    record(change: AccountChange): TriggerEventMutation[] {
      // The project's own accounts and its tenants' (the realm key starts with the project id).
      if (change.realm.split('/')[0] !== projectId) return [];
      const eventType = eventTypes[change.kind];
      const names = targets.get(eventType) ?? [];
      if (!names.length) return [];
      const now = Date.now();
      const payload = JSON.stringify({ source: 'auth', eventType, projectId, user: userRecordWire(change.user) } satisfies AuthEventPayload);
      // The id is fixed here, once: every delivery of the stored event carries it.
      const events = names.map((target) => ({ id: randomUUID(), target, db: `auth/${change.realm}`, path: change.user.localId, commitTime: now * 1000, payload }));
      return [{ kind: 'insertTriggerEvents', events, now }];
    },
    committed: raised,
  };
}
