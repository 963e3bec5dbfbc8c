/**
 * Isolation between tenants, and between a tenant and its project, over raw HTTP so each refusal
 * is Hearth's own (the SDK refuses some of these itself before asking): ID tokens, refresh tokens,
 * action codes, SMS sessions and custom tokens of one realm never work in another; admin calls of
 * one tenant never read, list or change another's accounts; a deleted tenant takes its accounts
 * with it; a tenant of one project is unknown to another project. Firestore takes every tenant's
 * ID tokens, and its rules tell tenants apart by `firebase.tenant`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { call, claimsOf, clientCall, createTenant, errorCode, tenantOobCodes, tenantsPath, type TenantResource } from '../helpers/tenants.js';

let server: TestHearth;
let a: TenantResource;
let b: TenantResource;

const v1 = () => `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}`;

interface Session {
  localId: string;
  idToken: string;
  refreshToken: string;
}

async function signUp(tenantId: string | undefined, email = uniqueEmail('iso'), password = 'secret12'): Promise<Session & { email: string }> {
  const answer = await clientCall(server, 'signUp', { email, password, returnSecureToken: true, ...(tenantId ? { tenantId } : {}) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return { ...(answer.body as Session), email };
}

const refresh = (refreshToken: string, extra: Record<string, unknown> = {}) =>
  postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });

before(async () => {
  server = await startHearth();
  a = await createTenant(server, { displayName: 'Alpha' });
  b = await createTenant(server, { displayName: 'Bravo' });
});
after(async () => {
  await server.close();
});

describe('ID tokens', () => {
  test("a tenant's ID token works in its tenant only; a project's only in the project", async () => {
    const alice = await signUp(a.tenantId);
    const projectUser = await signUp(undefined);
    assert.equal(claimsOf(alice.idToken).firebase.tenant, a.tenantId);
    assert.equal(claimsOf(projectUser.idToken).firebase.tenant, undefined);

    // No tenantId (the SDK sends none with lookup): the token's tenant is the realm.
    const own = await clientCall(server, 'lookup', { idToken: alice.idToken });
    assert.equal(own.status, 200);
    assert.equal(own.body.users[0].localId, alice.localId);
    assert.equal(own.body.users[0].tenantId, a.tenantId);
    assert.equal((await clientCall(server, 'lookup', { idToken: alice.idToken, tenantId: a.tenantId })).status, 200);

    for (const [name, body] of [
      ['lookup', { idToken: alice.idToken, tenantId: b.tenantId }],
      ['update', { idToken: alice.idToken, displayName: 'Mallory', tenantId: b.tenantId }],
      ['delete', { idToken: alice.idToken, tenantId: b.tenantId }],
      ['signUp', { idToken: alice.idToken, email: uniqueEmail('link'), password: 'secret12', tenantId: b.tenantId }],
      ['sendOobCode', { requestType: 'VERIFY_EMAIL', idToken: alice.idToken, tenantId: b.tenantId }],
      ['lookup', { idToken: projectUser.idToken, tenantId: a.tenantId }],
    ] as const) {
      const refused = await clientCall(server, name, body);
      assert.equal(refused.status, 400, `${name}: ${JSON.stringify(refused.body)}`);
      assert.equal(errorCode(refused), 'TENANT_ID_MISMATCH', name);
    }
    assert.equal((await clientCall(server, 'lookup', { idToken: alice.idToken })).body.users[0].displayName, undefined, 'nothing was changed');
  });

  test('a token claiming another tenant, unsigned or signed by another key, is refused', async () => {
    const alice = await signUp(a.tenantId);
    const claims = { ...claimsOf(alice.idToken), firebase: { identities: {}, sign_in_provider: 'password', tenant: b.tenantId } };
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
    const resigned = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: JSON.parse(Buffer.from(alice.idToken.split('.')[0]!, 'base64url').toString()).kid }).sign(new Uint8Array(32));
    for (const forged of [unsigned, resigned]) {
      const answer = await clientCall(server, 'lookup', { idToken: forged });
      assert.equal(errorCode(answer), 'INVALID_ID_TOKEN');
    }
  });
});

describe('refresh tokens', () => {
  test("a tenant's refresh token keeps its tenant and is refused when asked for another", async () => {
    const alice = await signUp(a.tenantId);
    const refreshed = await refresh(alice.refreshToken);
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body.project_id, server.projectId);
    assert.equal(claimsOf(refreshed.body.id_token).firebase.tenant, a.tenantId);
    assert.equal(errorCode(await refresh(alice.refreshToken, { tenantId: b.tenantId })), 'TENANT_ID_MISMATCH');
    assert.equal((await refresh(alice.refreshToken, { tenantId: a.tenantId })).status, 200);
  });
});

describe('passwords and accounts', () => {
  test("the same address is a different account in each realm, each with its own password", async () => {
    const email = uniqueEmail('same');
    const inA = await signUp(a.tenantId, email, 'password-a');
    const inB = await signUp(b.tenantId, email, 'password-b');
    const inProject = await signUp(undefined, email, 'password-p');
    assert.equal(new Set([inA.localId, inB.localId, inProject.localId]).size, 3);
    const signIn = (tenantId: string | undefined, password: string) => clientCall(server, 'signInWithPassword', { email, password, returnSecureToken: true, ...(tenantId ? { tenantId } : {}) });
    assert.equal((await signIn(a.tenantId, 'password-a')).body.localId, inA.localId);
    assert.equal((await signIn(b.tenantId, 'password-b')).body.localId, inB.localId);
    assert.equal((await signIn(undefined, 'password-p')).body.localId, inProject.localId);
    for (const [tenantId, password] of [[b.tenantId, 'password-a'], [undefined, 'password-a'], [a.tenantId, 'password-b']] as const) {
      assert.equal(errorCode(await signIn(tenantId, password)), 'INVALID_LOGIN_CREDENTIALS');
    }
  });

  test('an unknown, malformed or foreign-project tenant is refused before anything is read', async () => {
    const body = { email: uniqueEmail('nowhere'), password: 'secret12', returnSecureToken: true };
    assert.equal(errorCode(await clientCall(server, 'signUp', { ...body, tenantId: 'Nobody-00000' })), 'TENANT_NOT_FOUND');
    assert.equal(errorCode(await clientCall(server, 'signUp', { ...body, tenantId: 'has space' })), 'INVALID_TENANT_ID');
    assert.equal(errorCode(await clientCall(server, 'signUp', { ...body, tenantId: '../demo-test' })), 'INVALID_TENANT_ID');
    const wrongType = await clientCall(server, 'signUp', { ...body, tenantId: 42 });
    assert.equal(wrongType.status, 400);
    assert.match(wrongType.body.error.message, /Invalid JSON payload/);

    // Another project (its own API key) does not have this project's tenants.
    const other = await call(server, 'GET', '/identitytoolkit.googleapis.com/v2/projects/other-project/config');
    const otherKey = other.body.apiKeys[0] as string;
    assert.equal(errorCode(await clientCall(server, 'signUp', { ...body, tenantId: a.tenantId }, otherKey)), 'TENANT_NOT_FOUND');
  });
});

describe('projects', () => {
  test("another project's tenant, its accounts and tokens are unknown here, whatever the request names", async () => {
    const otherKey = (await call(server, 'GET', '/identitytoolkit.googleapis.com/v2/projects/other-project/config')).body.apiKeys[0] as string;
    const foreign = await call(server, 'POST', tenantsPath(server, 'other-project'), { displayName: 'Foreign', allowPasswordSignup: true });
    assert.equal(foreign.status, 200);
    const signedUp = await clientCall(server, 'signUp', { email: uniqueEmail('foreign'), password: 'secret12', returnSecureToken: true, tenantId: foreign.body.tenantId }, otherKey);
    assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
    assert.equal(claimsOf(signedUp.body.idToken).aud, 'other-project');

    assert.equal(errorCode(await clientCall(server, 'lookup', { idToken: signedUp.body.idToken })), 'TENANT_NOT_FOUND');
    assert.equal(errorCode(await clientCall(server, 'lookup', { idToken: signedUp.body.idToken, tenantId: a.tenantId })), 'INVALID_ID_TOKEN');
    assert.equal(errorCode(await call(server, 'GET', `${v1()}/tenants/${foreign.body.tenantId}/accounts:batchGet`)), 'TENANT_NOT_FOUND');
    assert.equal((await clientCall(server, 'lookup', { idToken: signedUp.body.idToken }, otherKey)).status, 200, 'at home it works');
  });
});

describe('codes', () => {
  test("a tenant's action code is invalid in another tenant and in the project", async () => {
    const alice = await signUp(a.tenantId);
    const issued = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:sendOobCode`, { requestType: 'PASSWORD_RESET', email: alice.email, returnOobLink: true });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const reset = (tenantId: string | undefined) => clientCall(server, 'resetPassword', { oobCode: issued.body.oobCode, newPassword: 'changed-pw', ...(tenantId ? { tenantId } : {}) });
    assert.equal(errorCode(await reset(b.tenantId)), 'INVALID_OOB_CODE');
    assert.equal(errorCode(await reset(undefined)), 'INVALID_OOB_CODE');
    assert.equal((await reset(a.tenantId)).status, 200, 'still unused, it works in its own tenant');

    // The emulator's link handler reads the tenant from the link: another tenant's is refused.
    const verify = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:sendOobCode`, { requestType: 'VERIFY_EMAIL', email: alice.email, returnOobLink: true });
    const link = new URL(verify.body.oobLink);
    link.searchParams.set('tenantId', b.tenantId);
    const answer = await fetch(`${server.url}/emulator/action?${link.searchParams}`);
    assert.equal(answer.status, 400);
    link.searchParams.set('tenantId', 'Unknown-zzzzz');
    assert.match(await (await fetch(`${server.url}/emulator/action?${link.searchParams}`)).text(), /TENANT_NOT_FOUND/);
  });

  test("a tenant's SMS session is unknown in another tenant; its code is listed for its tenant only", async () => {
    const phoneNumber = '+15550100123';
    const sent = await clientCall(server, 'sendVerificationCode', { phoneNumber, recaptchaToken: 'dev-token', tenantId: a.tenantId });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const codes = async (tenantId?: string) =>
      (await call(server, 'GET', `/emulator/v1/projects/${server.projectId}${tenantId ? `/tenants/${tenantId}` : ''}/verificationCodes`)).body.verificationCodes as Array<{ sessionInfo: string; code: string }>;
    const entry = (await codes(a.tenantId)).find((c) => c.sessionInfo === sent.body.sessionInfo)!;
    assert.ok(entry);
    assert.ok(!(await codes()).some((c) => c.sessionInfo === sent.body.sessionInfo));
    assert.ok(!(await codes(b.tenantId)).some((c) => c.sessionInfo === sent.body.sessionInfo));
    const signIn = (tenantId: string | undefined) => clientCall(server, 'signInWithPhoneNumber', { sessionInfo: sent.body.sessionInfo, code: entry.code, ...(tenantId ? { tenantId } : {}) });
    assert.equal(errorCode(await signIn(b.tenantId)), 'INVALID_SESSION_INFO');
    assert.equal(errorCode(await signIn(undefined)), 'INVALID_SESSION_INFO');
    const signedIn = await signIn(a.tenantId);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(claimsOf(signedIn.body.idToken).firebase.tenant, a.tenantId);
    assert.equal(claimsOf(signedIn.body.idToken).firebase.sign_in_provider, 'phone');
  });

  test('an unsigned (--dev) custom token works only in the tenant it names', async () => {
    const unsigned = (claims: Record<string, unknown>) =>
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
        JSON.stringify({ aud: 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit', uid: 'custom-iso', ...claims }),
      ).toString('base64url')}.`;
    const token = unsigned({ tenant_id: a.tenantId });
    assert.equal(errorCode(await clientCall(server, 'signInWithCustomToken', { token, tenantId: b.tenantId })), 'TENANT_ID_MISMATCH');
    assert.equal(errorCode(await clientCall(server, 'signInWithCustomToken', { token })), 'TENANT_ID_MISMATCH');
    assert.equal(errorCode(await clientCall(server, 'signInWithCustomToken', { token: unsigned({}), tenantId: a.tenantId })), 'TENANT_ID_MISMATCH');
    const signedIn = await clientCall(server, 'signInWithCustomToken', { token, tenantId: a.tenantId, returnSecureToken: true });
    assert.equal(claimsOf(signedIn.body.idToken).firebase.tenant, a.tenantId);
  });
});

describe('admin calls', () => {
  test("a tenant's admin calls never list, find or change another's accounts", async () => {
    const alice = await signUp(a.tenantId);
    const bob = await signUp(b.tenantId);
    const listed = async (tenantId?: string) =>
      ((await call(server, 'GET', `${v1()}${tenantId ? `/tenants/${tenantId}` : ''}/accounts:batchGet?maxResults=1000`)).body.users ?? []).map((u: { localId: string }) => u.localId) as string[];
    assert.ok((await listed(a.tenantId)).includes(alice.localId));
    assert.ok(!(await listed(a.tenantId)).includes(bob.localId));
    assert.ok(!(await listed()).includes(alice.localId), "the project's list has no tenant accounts");

    const lookupInA = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:lookup`, { localId: [bob.localId, alice.localId], email: [bob.email] });
    assert.deepEqual(lookupInA.body.users.map((u: { localId: string }) => u.localId), [alice.localId]);
    const queried = await call(server, 'POST', `${v1()}/tenants/${b.tenantId}/accounts:query`, { expression: [{ userId: alice.localId }] });
    assert.equal(queried.body.recordsCount, '0');
    // A bare count is the tenant's own accounts, as its list is.
    const counted = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:query`, { returnUserInfo: false });
    assert.deepEqual(counted.body, { recordsCount: String((await listed(a.tenantId)).length) });

    const changed = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:update`, { localId: bob.localId, displayName: 'Mallory' });
    assert.equal(errorCode(changed), 'USER_NOT_FOUND');
    const deleted = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:batchDelete`, { localIds: [bob.localId], force: true });
    assert.equal(deleted.status, 200);
    assert.equal((await clientCall(server, 'lookup', { idToken: bob.idToken })).status, 200, "the other tenant's account is still there");

    // The path names one tenant and the body another: refused, not either.
    const mixed = await call(server, 'POST', `${v1()}/tenants/${a.tenantId}/accounts:lookup`, { localId: [alice.localId], tenantId: b.tenantId });
    assert.equal(errorCode(mixed), 'TENANT_ID_MISMATCH');
    const byBody = await call(server, 'POST', `${v1()}/accounts:lookup`, { localId: [alice.localId], tenantId: a.tenantId });
    assert.equal(byBody.body.users[0].localId, alice.localId, 'at the project path, the body may name the tenant');
  });

  test('deleting a tenant deletes its accounts, sessions and codes; its id is never reused', async () => {
    const doomed = await createTenant(server, { displayName: 'Doomed' });
    const carol = await signUp(doomed.tenantId);
    await clientCall(server, 'sendOobCode', { requestType: 'PASSWORD_RESET', email: carol.email, tenantId: doomed.tenantId });
    assert.equal((await tenantOobCodes(server, doomed.tenantId)).length, 1);
    const code = (await tenantOobCodes(server, doomed.tenantId))[0]!.oobCode;

    assert.equal((await call(server, 'DELETE', `${tenantsPath(server)}/${doomed.tenantId}`)).status, 200);
    assert.equal(errorCode(await clientCall(server, 'lookup', { idToken: carol.idToken })), 'TENANT_NOT_FOUND');
    assert.equal(errorCode(await refresh(carol.refreshToken)), 'INVALID_REFRESH_TOKEN');
    assert.equal(errorCode(await clientCall(server, 'resetPassword', { oobCode: code, newPassword: 'whatever1', tenantId: doomed.tenantId })), 'TENANT_NOT_FOUND');
    assert.equal(errorCode(await clientCall(server, 'signInWithPassword', { email: carol.email, password: 'secret12', tenantId: doomed.tenantId })), 'TENANT_NOT_FOUND');
    assert.equal(errorCode(await call(server, 'GET', `${v1()}/tenants/${doomed.tenantId}/accounts:batchGet`)), 'TENANT_NOT_FOUND');

    const again = await createTenant(server, { displayName: 'Doomed' });
    assert.notEqual(again.tenantId, doomed.tenantId);
    assert.deepEqual((await call(server, 'GET', `${v1()}/tenants/${again.tenantId}/accounts:batchGet`)).body.users ?? [], []);
  });
});

describe('Firestore', () => {
  test("takes every tenant's ID tokens; rules tell the tenants apart by firebase.tenant", async () => {
    const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /orgs/{tenant}/{document=**} {
      allow read, write: if request.auth != null && request.auth.token.firebase.tenant == tenant;
    }
  }
}`;
    const deployed = await call(server, 'PUT', `/emulator/v1/projects/${server.projectId}:securityRules`, { rules: { files: [{ content: rules }] } });
    assert.equal(deployed.status, 200, JSON.stringify(deployed.body));
    const write = (idToken: string, tenantId: string) =>
      call(server, 'PATCH', `/v1/projects/${server.projectId}/databases/(default)/documents/orgs/${tenantId}/notes/n1`, { fields: { text: { stringValue: 'hi' } } }, { authorization: `Bearer ${idToken}` });
    const alice = await signUp(a.tenantId);
    const bob = await signUp(b.tenantId);
    const projectUser = await signUp(undefined);
    assert.equal((await write(alice.idToken, a.tenantId)).status, 200);
    assert.equal((await write(bob.idToken, a.tenantId)).status, 403);
    assert.equal((await write(projectUser.idToken, a.tenantId)).status, 403);
    assert.equal((await write(bob.idToken, b.tenantId)).status, 200);
  });
});

describe('limits', () => {
  test("mails to one address and texts to one number are counted per project, across its tenants", async () => {
    const limited = await startHearth({ mailThrottle: { maxFailures: 3, windowMs: 3600_000 }, smsLimits: { perNumber: { maxFailures: 2, windowMs: 3600_000 }, perAddress: { maxFailures: 100, windowMs: 3600_000 } } });
    try {
      const one = await createTenant(limited, { displayName: 'First' });
      const two = await createTenant(limited, { displayName: 'Second' });
      const email = uniqueEmail('limited');
      const reset = (tenantId: string) => clientCall(limited, 'sendOobCode', { requestType: 'PASSWORD_RESET', email, tenantId });
      assert.equal((await reset(one.tenantId)).status, 200);
      assert.equal((await reset(one.tenantId)).status, 200);
      assert.equal((await reset(two.tenantId)).status, 200);
      assert.equal(errorCode(await reset(two.tenantId)), 'RESET_PASSWORD_EXCEED_LIMIT', 'a fourth mail to the address, whichever tenant asks');

      const text = (tenantId: string) => clientCall(limited, 'sendVerificationCode', { phoneNumber: '+15550100777', recaptchaToken: 'dev-token', tenantId });
      assert.equal((await text(one.tenantId)).status, 200);
      assert.equal((await text(two.tenantId)).status, 200);
      assert.equal(errorCode(await text(two.tenantId)), 'QUOTA_EXCEEDED');
      assert.equal(errorCode(await clientCall(limited, 'sendVerificationCode', { phoneNumber: '+15550100777', recaptchaToken: 'dev-token' })), 'QUOTA_EXCEEDED');
    } finally {
      await limited.close();
    }
  });
});
