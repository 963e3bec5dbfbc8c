/**
 * The tenant endpoints (v2 projects.tenants) over raw HTTP: Google's error shapes for bad ids,
 * unknown and mistyped fields, bad update masks and page tokens, oversized bodies; callers that
 * are not the project's administrator (API key only, a page on another site with the admin
 * credential) refused; a flood of made-up tenant ids costs no writes; nothing answers 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { call, clientCall, createTenant, errorCode, tenantsPath, type TenantResource } from '../helpers/tenants.js';

let server: TestHearth;
let tenant: TenantResource;

before(async () => {
  server = await startHearth();
  tenant = await createTenant(server, { displayName: 'Target' });
});
after(async () => {
  await server.close();
});

const invalid = (answer: { status: number; body: any }, pattern: RegExp) => {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
  assert.match(answer.body.error.message, pattern);
};

describe('who may manage tenants', () => {
  test("only the project's administrator: an API key or no credential is refused on every verb", async () => {
    const item = `${tenantsPath(server)}/${tenant.tenantId}`;
    for (const [method, path, body] of [
      ['POST', tenantsPath(server), { displayName: 'Sneaky' }],
      ['GET', tenantsPath(server), undefined],
      ['GET', item, undefined],
      ['PATCH', item, { disableAuth: true }],
      ['DELETE', item, undefined],
    ] as const) {
      const credentials: Array<Record<string, string>> = [{}, { 'x-goog-api-key': server.apiKey }, { authorization: 'Bearer not-the-key' }];
      for (const headers of credentials) {
        const answer = await call(server, method, path, body, headers);
        assert.equal(answer.status, 400, `${method} ${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(errorCode(answer), 'ADMIN_ONLY_OPERATION');
      }
    }
    const still = await call(server, 'GET', item);
    assert.equal(still.body.disableAuth, false, 'nothing was changed');
  });

  test('the admin credential from a page on another site is refused, with no CORS grant', async () => {
    for (const authorization of ['Bearer owner', `Bearer ${server.adminKey}`]) {
      const response = await fetch(`${server.url}${tenantsPath(server)}`, {
        method: 'POST',
        headers: { authorization, origin: 'http://evil.example', 'content-type': 'application/json' },
        body: JSON.stringify({ displayName: 'Evil' }),
      });
      assert.equal(response.status, 403);
      assert.equal(response.headers.get('access-control-allow-origin'), null);
    }
    const names = ((await call(server, 'GET', tenantsPath(server))).body.tenants as TenantResource[]).map((t) => t.displayName);
    assert.ok(!names.includes('Evil'));
  });
});

describe('bad requests', () => {
  test('unknown fields, fields Hearth lacks and wrong types are refused', async () => {
    invalid(await call(server, 'POST', tenantsPath(server), { displayName: 'Extra', color: 'red' }), /Unknown name/);
    invalid(await call(server, 'POST', tenantsPath(server), { displayName: 'Phones', testPhoneNumbers: { '+15550100100': '123456' } }), /Unknown name/);
    invalid(await call(server, 'POST', tenantsPath(server), { allowPasswordSignup: 'yes' }), /Invalid JSON payload/);
    invalid(await call(server, 'PATCH', `${tenantsPath(server)}/${tenant.tenantId}`, { emailPrivacyConfig: { enableImprovedEmailPrivacy: 1 } }), /Invalid JSON payload/);
    invalid(await call(server, 'POST', tenantsPath(server), '{"displayName": '), /Invalid JSON payload|Unexpected end/);
  });

  test("display names follow Google's rule; passwords policies, domains and the mail sender are checked", async () => {
    for (const displayName of ['ab', '1abc', 'has space', 'x'.repeat(21), 'émile', '']) {
      const answer = await call(server, 'POST', tenantsPath(server), { displayName });
      assert.equal(answer.status, 400, displayName);
    }
    invalid(
      await call(server, 'POST', tenantsPath(server), { passwordPolicyConfig: { passwordPolicyVersions: [{ customStrengthOptions: { minPasswordLength: 3 } }] } }),
      /minPasswordLength/,
    );
    invalid(await call(server, 'POST', tenantsPath(server), { authorizedDomains: ['evil.example/path'] }), /Invalid value at 'authorizedDomains.0'/);
    invalid(await call(server, 'POST', tenantsPath(server), { mail: { from: 'a@b.c\r\nBcc: victim@example.com' } }), /Invalid value at 'mail.from'/);
  });

  test('bad tenant ids in the path, unknown tenants, and tenants of another project', async () => {
    for (const id of ['-leading-hyphen', 'x'.repeat(65), 'with.dot', '%20']) {
      const answer = await call(server, 'GET', `${tenantsPath(server)}/${id}`);
      assert.equal(answer.status, 400, id);
    }
    for (const [method, body] of [['GET', undefined], ['PATCH', { displayName: 'Ghost' }], ['DELETE', undefined]] as const) {
      assert.equal(errorCode(await call(server, method, `${tenantsPath(server)}/Unknown-abcde`, body)), 'TENANT_NOT_FOUND', method);
      assert.equal(errorCode(await call(server, method, `${tenantsPath(server, 'other-project')}/${tenant.tenantId}`, body)), 'TENANT_NOT_FOUND', `${method} elsewhere`);
    }
  });

  test('update masks name known fields only; page sizes and tokens are checked', async () => {
    const item = `${tenantsPath(server)}/${tenant.tenantId}`;
    invalid(await call(server, 'PATCH', `${item}?updateMask=displayName,color`, { displayName: 'Renamed' }), /Unknown field in updateMask: color/);
    invalid(await call(server, 'PATCH', `${item}?updateMask=a&updateMask=b`, {}), /Invalid JSON payload|updateMask/);
    const masked = await call(server, 'PATCH', `${item}?updateMask=enableAnonymousUser`, { displayName: 'Ignored', enableAnonymousUser: false });
    assert.equal(masked.status, 200);
    assert.equal(masked.body.displayName, 'Target', 'a field outside the mask is left as it was');
    assert.equal(masked.body.enableAnonymousUser, false);

    for (const pageSize of ['0', '1001', 'abc', '-1']) assert.equal((await call(server, 'GET', `${tenantsPath(server)}?pageSize=${pageSize}`)).status, 400, pageSize);
    for (const pageToken of ['garbage', Buffer.from('[1,2]').toString('base64url'), 'x'.repeat(300)]) {
      const answer = await call(server, 'GET', `${tenantsPath(server)}?pageToken=${pageToken}`);
      assert.equal(answer.status, 400, pageToken);
    }
    assert.equal(errorCode(await call(server, 'GET', `${tenantsPath(server)}?pageToken=garbage`)), 'INVALID_PAGE_SELECTION');
  });

  test('an oversized body is refused before it is read whole', async () => {
    const answer = await call(server, 'POST', tenantsPath(server), { displayName: 'Large', authorizedDomains: ['a'.repeat(2 * 1024 * 1024)] });
    assert.equal(answer.status, 413);
  });
});

describe('floods', () => {
  test('client calls naming made-up tenants are refused from memory: no tenant, account or row appears', async () => {
    const before = (await call(server, 'GET', tenantsPath(server))).body.tenants.length as number;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => clientCall(server, 'signUp', { email: `flood-${i}@example.com`, password: 'secret12', tenantId: `Made-up-${i}` })),
    );
    assert.ok(answers.every((answer) => errorCode(answer) === 'TENANT_NOT_FOUND'));
    assert.equal((await call(server, 'GET', tenantsPath(server))).body.tenants.length, before);
    assert.equal(errorCode(await call(server, 'GET', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/Made-up-7/accounts:batchGet`)), 'TENANT_NOT_FOUND');
  });
});
