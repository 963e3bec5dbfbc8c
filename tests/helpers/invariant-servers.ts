/**
 * The servers of the rules invariant: Hearth in production mode (no --dev; rules released with the admin key;
 * users created by the administrator, given custom claims, signed in with their passwords: real RS256 ID tokens),
 * and Google's Firestore emulator as the oracle of what listeners should receive (the same uids and claims in
 * unsigned tokens, which it accepts). Both are written to by the administrator through the REST commit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from './hearth.js';
import { userClaims, userIds, type CallerName, type Round, type WriteStep } from './invariant-world.js';
import { micros, toWireFields } from './invariant-wire.js';
import { unsignedIdToken } from './rules-tokens.js';

export const invariantProject = 'demo-invariant';

/** One server the corpus runs against: where it is, the administrator's header, each caller's ID token. */
export interface InvariantServer {
  label: 'hearth' | 'emulator';
  url: string;
  hostPort: string;
  projectId: string;
  apiKey: string;
  adminAuthorization: string;
  tokens: Record<CallerName, string | undefined>;
  close(): Promise<void>;
}

export function authorizationOf(server: InvariantServer, caller: CallerName): string | undefined {
  const token = server.tokens[caller];
  return token === undefined ? undefined : `Bearer ${token}`;
}

/**
 * Hearth in production mode with the vector indexes findNearest needs outside --dev (every round's posts, with no
 * pre-filter, or an equality on visibility or owner), and the corpus's users signed in.
 */
export async function startInvariantHearth(rounds: readonly Round[]): Promise<InvariantServer & { hearth: TestHearth }> {
  const dataDir = tempDataDir();
  const indexesFile = join(dataDir, 'firestore.indexes.json');
  const vector = { fieldPath: 'embedding', vectorConfig: { dimension: 2, flat: {} } };
  const indexes = rounds.flatMap((round) =>
    [[], ['visibility'], ['owner']].map((prefix) => ({
      collectionGroup: round.names.posts,
      queryScope: 'COLLECTION',
      fields: [...prefix.map((fieldPath) => ({ fieldPath, order: 'ASCENDING' })), vector],
    })),
  );
  writeFileSync(indexesFile, JSON.stringify({ indexes, fieldOverrides: [] }));
  const hearth = await startHearth({ dev: false, defaultProjectId: invariantProject, indexesFile });
  try {
    const admin = `Bearer ${hearth.adminKey}`;
    const tokens: Record<CallerName, string | undefined> = { anonymous: undefined, u1: undefined, u2: undefined, u3: undefined };
    for (const uid of userIds) tokens[uid] = await signedInUser(hearth, admin, uid);
    return {
      label: 'hearth',
      url: hearth.url,
      hostPort: hearth.hostPort,
      projectId: hearth.projectId,
      apiKey: hearth.apiKey,
      adminAuthorization: admin,
      tokens,
      hearth,
      close: () => hearth.close(),
    };
  } catch (error) {
    await hearth.close();
    throw error;
  }
}

/** Created by the administrator with a fixed uid and its claims, then signed in with its password: an ID token Hearth signed. */
async function signedInUser(hearth: TestHearth, admin: string, uid: string): Promise<string> {
  const identity = `${hearth.url}/identitytoolkit.googleapis.com/v1`;
  const email = `${uid}@invariant.example`;
  const created = await postJson(`${identity}/projects/${hearth.projectId}/accounts`, { localId: uid, email, password: 'invariant-secret', emailVerified: true }, { authorization: admin });
  if (created.status !== 200) throw new Error(`creating ${uid}: ${created.status} ${JSON.stringify(created.body)}`);
  const claims = userClaims[uid as keyof typeof userClaims];
  if (Object.keys(claims).length) {
    const updated = await postJson(`${identity}/projects/${hearth.projectId}/accounts:update`, { localId: uid, customAttributes: JSON.stringify(claims) }, { authorization: admin });
    if (updated.status !== 200) throw new Error(`claims of ${uid}: ${updated.status} ${JSON.stringify(updated.body)}`);
  }
  const signedIn = await postJson(`${identity}/accounts:signInWithPassword?key=${hearth.apiKey}`, { email, password: 'invariant-secret', returnSecureToken: true });
  if (signedIn.status !== 200) throw new Error(`signing in ${uid}: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
  return (signedIn.body as { idToken: string }).idToken;
}

/** Google's emulator with the same project, uids and claims (unsigned tokens), or undefined when it is not installed. */
export async function startInvariantEmulator(): Promise<(InvariantServer & { emulator: GoogleEmulator }) | undefined> {
  const emulator = await startGoogleEmulator({ startupTimeoutMs: 120_000 });
  if (!emulator) return undefined;
  const tokens: Record<CallerName, string | undefined> = { anonymous: undefined, u1: undefined, u2: undefined, u3: undefined };
  for (const uid of userIds) {
    tokens[uid] = unsignedIdToken(invariantProject, { uid, email: `${uid}@invariant.example`, emailVerified: true, provider: 'password', claims: userClaims[uid] });
  }
  return {
    label: 'emulator',
    url: emulator.url,
    hostPort: emulator.hostPort,
    projectId: invariantProject,
    apiKey: 'emulator-any-key',
    adminAuthorization: 'Bearer owner',
    tokens,
    emulator,
    close: () => emulator.stop(),
  };
}

export function databaseName(server: InvariantServer): string {
  return `projects/${server.projectId}/databases/(default)`;
}

export function documentName(server: InvariantServer, path: string): string {
  return `${databaseName(server)}/documents/${path}`;
}

export async function releaseRules(server: InvariantServer, source: string): Promise<void> {
  const response = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: server.adminAuthorization },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }),
  });
  if (!response.ok) throw new Error(`${server.label}: releasing rules failed: ${response.status} ${await response.text()}\n${source}`);
}

/** The wire form of a corpus write. */
export function wireWrite(server: InvariantServer, step: WriteStep): Record<string, unknown> {
  const name = documentName(server, step.path);
  if (step.kind === 'delete') return { delete: name };
  const fields = toWireFields(step.data);
  if (step.kind === 'set') return { update: { name, fields } };
  const masked = Object.fromEntries(Object.entries(fields).filter(([key]) => (step.mask as string[]).includes(key)));
  return { update: { name, fields: masked }, updateMask: { fieldPaths: step.mask }, currentDocument: { exists: true } };
}

/** Commits writes as the administrator in one commit; answers the commit time in microseconds. */
export async function commitAsAdmin(server: InvariantServer, steps: readonly WriteStep[]): Promise<number> {
  const answer = await postJson(`${server.url}/v1/${databaseName(server)}/documents:commit`, { writes: steps.map((step) => wireWrite(server, step)) }, { authorization: server.adminAuthorization });
  if (answer.status !== 200) throw new Error(`${server.label}: admin commit failed: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  return micros((answer.body as { commitTime: string }).commitTime);
}

/** Writes the round's sentinel (readable by everyone) with `mark` as its title: listeners that show it caught up. */
export function writeMark(server: InvariantServer, round: Round, mark: string): Promise<number> {
  return commitAsAdmin(server, [{ kind: 'set', path: `${round.names.sentinel}/mark`, data: { title: mark } }]);
}
