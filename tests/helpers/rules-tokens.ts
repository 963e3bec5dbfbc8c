/**
 * The users of the security-rules tests (tests/firestore-rules-*.test.ts) and their ID tokens: unsigned JWTs
 * (`alg: none`, empty signature) in the shape the Firebase SDKs' `mockUserToken` builds, which Google's emulator,
 * and Hearth in --dev, accept as a user's ID token.
 */

export interface RulesUser {
  uid: string;
  email?: string;
  emailVerified?: boolean;
  /** `firebase.sign_in_provider`: password, google.com, anonymous, custom, ... */
  provider: string;
  /** Custom claims, at the top level of the token as firebase-admin's setCustomUserClaims puts them. */
  claims?: Record<string, unknown>;
}

/**
 * A small cast that the rulesets below tell apart: an admin by custom claim, an editor, a plain verified user, an
 * unverified one, an anonymous one and a federated one. `null` (no Authorization header) is the signed-out caller.
 */
export const rulesUsers = {
  alice: { uid: 'alice', email: 'alice@example.com', emailVerified: true, provider: 'password', claims: { role: 'admin' } },
  bob: { uid: 'bob', email: 'bob@example.com', emailVerified: true, provider: 'password', claims: { role: 'editor' } },
  carol: { uid: 'carol', email: 'Carol@Example.com', emailVerified: true, provider: 'google.com' },
  dave: { uid: 'dave', email: 'dave@example.org', emailVerified: false, provider: 'password' },
  anon: { uid: 'anon1', provider: 'anonymous' },
  mallory: { uid: 'mallory', email: 'mallory@example.com', emailVerified: true, provider: 'password', claims: { role: 'banned', admin: false } },
} satisfies Record<string, RulesUser>;

export type RulesUserName = keyof typeof rulesUsers;
export const rulesUserNames = Object.keys(rulesUsers) as RulesUserName[];

/** The caller of one request: a named user, or nobody. */
export type Caller = RulesUserName | null;

function base64Url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** An unsigned ID token for `user`, valid for an hour from `nowSeconds`, with `projectId` as its audience. */
export function unsignedIdToken(projectId: string, user: RulesUser, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const identities: Record<string, string[]> = {};
  if (user.email && user.provider !== 'anonymous') identities.email = [user.email];
  if (user.provider === 'google.com') identities['google.com'] = [`google-${user.uid}`];
  const payload = {
    iss: `https://securetoken.google.com/${projectId}`,
    aud: projectId,
    auth_time: nowSeconds,
    user_id: user.uid,
    sub: user.uid,
    iat: nowSeconds,
    exp: nowSeconds + 3600,
    ...(user.email !== undefined && { email: user.email }),
    ...(user.emailVerified !== undefined && { email_verified: user.emailVerified }),
    firebase: { identities, sign_in_provider: user.provider },
    ...user.claims,
  };
  return `${base64Url({ alg: 'none', typ: 'JWT' })}.${base64Url(payload)}.`;
}

/** The Authorization header value for a caller, or undefined for nobody. */
export function bearerFor(projectId: string, caller: Caller): string | undefined {
  return caller === null ? undefined : `Bearer ${unsignedIdToken(projectId, rulesUsers[caller])}`;
}
