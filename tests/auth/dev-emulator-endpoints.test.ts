/**
 * The Auth emulator's own endpoints in --dev, as the SDKs' test suites and the Firebase CLI call
 * them: `DELETE /emulator/v1/projects/{p}[/tenants/{t}]/accounts` without a credential (from local
 * tools, and from pages served from this machine, with CORS; never from a page of another site);
 * the CLI's emulator import (`accounts:batchCreate` under an empty tenant segment, with the export's
 * body and the emulator's fakeHash passwords) and export (`accounts:batchGet?maxResults=-1`).
 * Outside --dev the administrator's credential is needed and the CLI's shapes are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { uniqueEmail } from '../helpers/admin-http.js';
import { startDevHearth } from '../helpers/dev-hearth.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { clientCall, createTenant, errorCode } from '../helpers/tenants.js';

let dev: TestHearth;
let production: TestHearth;

before(async () => {
  dev = await startDevHearth();
  production = await startHearth({ dev: false });
});
after(async () => {
  await dev.close();
  await production.close();
});

const owner = { authorization: 'Bearer owner' };
const accountsUrl = (server: TestHearth, tenantId?: string) => `${server.url}/emulator/v1/projects/${server.projectId}${tenantId ? `/tenants/${tenantId}` : ''}/accounts`;

async function countAccounts(server: TestHearth, credential: Record<string, string>, tenantId?: string): Promise<number> {
  const query = tenantId ? `&tenantId=${tenantId}` : '';
  const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:batchGet?maxResults=1000${query}`, { headers: credential });
  assert.equal(response.status, 200);
  return (((await response.json()) as { users?: unknown[] }).users ?? []).length;
}

async function signUp(server: TestHearth, tenantId?: string): Promise<string> {
  const answer = await clientCall(server, 'signUp', { email: uniqueEmail('reset'), password: 'secret12', returnSecureToken: true, ...(tenantId ? { tenantId } : {}) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.localId as string;
}

describe('--dev: DELETE /emulator/v1/projects/{p}/accounts needs no credential, as in the emulator', () => {
  test('from a local tool: the project and a tenant are emptied', async () => {
    await signUp(dev);
    const tenant = await createTenant(dev);
    await signUp(dev, tenant.tenantId);
    const project = await fetch(accountsUrl(dev), { method: 'DELETE' });
    assert.equal(project.status, 200, await project.text());
    assert.equal(await countAccounts(dev, owner), 0);
    assert.equal(await countAccounts(dev, owner, tenant.tenantId), 1, 'the tenant is a realm of its own');
    const inTenant = await fetch(accountsUrl(dev, tenant.tenantId), { method: 'DELETE' });
    assert.equal(inTenant.status, 200, await inTenant.text());
    assert.equal(await countAccounts(dev, owner, tenant.tenantId), 0);
  });

  test('from a page served from this machine (a test runner on another port): allowed, with CORS', async () => {
    await signUp(dev);
    const origin = 'http://localhost:9876';
    const preflight = await fetch(accountsUrl(dev), { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'DELETE' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
    const answer = await fetch(accountsUrl(dev), { method: 'DELETE', headers: { origin, 'sec-fetch-site': 'cross-site' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('access-control-allow-origin'), origin);
    assert.equal(await countAccounts(dev, owner), 0);
    // The emulator's code lists too, which the SDK's browser suites read from their page.
    const codes = await fetch(`${dev.url}/emulator/v1/projects/${dev.projectId}/oobCodes`, { headers: { origin } });
    assert.equal(codes.headers.get('access-control-allow-origin'), origin);
  });

  test('from a page of another site: refused, without CORS, nothing deleted', async () => {
    await signUp(dev);
    const before = await countAccounts(dev, owner);
    const origin = 'https://elsewhere.example';
    const answer = await fetch(accountsUrl(dev), { method: 'DELETE', headers: { origin, 'sec-fetch-site': 'cross-site' } });
    assert.equal(answer.status, 400);
    assert.equal(errorCode({ body: await answer.json() }), 'ADMIN_ONLY_OPERATION');
    assert.equal(answer.headers.get('access-control-allow-origin'), null);
    assert.equal(await countAccounts(dev, owner), before);
  });
});

describe('--dev: the Firebase CLI imports into and exports from Hearth', () => {
  test("emulators:start --import: tenants//accounts:batchCreate with the export file; the emulator's passwords work", async () => {
    const email = uniqueEmail('imported');
    // What the Auth emulator's export writes (firebase-tools: its batchGet answer; passwords as fakeHash).
    const exported = {
      kind: 'identitytoolkit#DownloadAccountResponse',
      users: [
        {
          localId: 'imported-1',
          createdAt: '1700000000000',
          lastLoginAt: '1700000100000',
          passwordHash: 'fakeHash:salt=fakeSaltAbCdEf:password=imported-secret',
          salt: 'fakeSaltAbCdEf',
          passwordUpdatedAt: 1700000000000,
          customAuth: false,
          validSince: '1700000000',
          email,
          emailVerified: true,
          emailLinkSignin: false,
          providerUserInfo: [{ providerId: 'password', email, federatedId: email, rawId: email }],
          lastRefreshAt: '2023-11-14T22:13:20.000Z',
        },
        { localId: 'imported-2', createdAt: '1700000000000', displayName: 'Ada', providerUserInfo: [{ providerId: 'google.com', rawId: 'g-123', federatedId: 'g-123', displayName: 'Ada' }], validSince: '1700000000', disabled: false },
      ],
    };
    const path = `/identitytoolkit.googleapis.com/v1/projects/${dev.projectId}/tenants//accounts:batchCreate`;
    const answer = await postJson(`${dev.url}${path}`, exported, owner);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, {});
    const signedIn = await clientCall(dev, 'signInWithPassword', { email, password: 'imported-secret', returnSecureToken: true });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, 'imported-1');
    const google = await postJson(`${dev.url}/identitytoolkit.googleapis.com/v1/projects/${dev.projectId}/accounts:lookup`, { localId: ['imported-2'] }, owner);
    assert.equal(google.body.users[0].providerUserInfo[0].providerId, 'google.com');
  });

  test('emulators:export: accounts:batchGet?maxResults=-1 answers every account, past the 1000 of a page', async () => {
    await fetch(accountsUrl(dev), { method: 'DELETE' });
    for (let batch = 0; batch < 2; batch++) {
      const users = Array.from({ length: 600 }, (_, i) => ({ localId: `bulk-${batch}-${String(i).padStart(4, '0')}` }));
      assert.equal((await postJson(`${dev.url}/identitytoolkit.googleapis.com/v1/projects/${dev.projectId}/accounts:batchCreate`, { users }, owner)).status, 200);
    }
    const response = await fetch(`${dev.url}/identitytoolkit.googleapis.com/v1/projects/${dev.projectId}/accounts:batchGet?maxResults=-1`, { headers: owner });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { kind: string; users: Array<{ localId: string }>; nextPageToken?: string };
    assert.equal(body.kind, 'identitytoolkit#DownloadAccountResponse');
    assert.equal(body.users.length, 1200);
    assert.equal(body.nextPageToken, undefined);
  });
});

describe('outside --dev none of it is reachable', () => {
  test('DELETE .../accounts needs the administrator: ADMIN_ONLY_OPERATION without, 200 with the admin key', async () => {
    await signUp(production);
    const refused = await fetch(accountsUrl(production), { method: 'DELETE' });
    assert.equal(refused.status, 400);
    assert.equal(errorCode({ body: await refused.json() }), 'ADMIN_ONLY_OPERATION');
    const admin = { authorization: `Bearer ${production.adminKey}` };
    assert.ok((await countAccounts(production, admin)) > 0);
    assert.equal((await fetch(accountsUrl(production), { method: 'DELETE', headers: admin })).status, 200);
    assert.equal(await countAccounts(production, admin), 0);
    // No CORS for a local page either.
    const local = await fetch(accountsUrl(production), { method: 'OPTIONS', headers: { origin: 'http://localhost:9876', 'access-control-request-method': 'DELETE' } });
    assert.equal(local.headers.get('access-control-allow-origin'), null);
  });

  test("the CLI's shapes are refused: an empty tenant segment, maxResults=-1, an export file's extra fields", async () => {
    const admin = { authorization: `Bearer ${production.adminKey}` };
    const base = `${production.url}/identitytoolkit.googleapis.com/v1/projects/${production.projectId}`;
    const emptyTenant = await postJson(`${base}/tenants//accounts:batchCreate`, { users: [{ localId: 'x' }] }, admin);
    assert.equal(emptyTenant.status, 400);
    const all = await fetch(`${base}/accounts:batchGet?maxResults=-1`, { headers: admin });
    assert.equal(all.status, 400);
    const exportShape = await postJson(`${base}/accounts:batchCreate`, { kind: 'identitytoolkit#DownloadAccountResponse', users: [{ localId: 'y', validSince: '1' }] }, admin);
    assert.equal(exportShape.status, 400);
    const fake = await postJson(`${base}/accounts:batchCreate`, { users: [{ localId: 'z', email: uniqueEmail('fake'), passwordHash: 'fakeHash:salt=s:password=p' }] }, admin);
    assert.equal(fake.status, 400, 'a passwordHash without its algorithm');
  });
});
