/**
 * Issue 14, sign-in settings: the preview of a project's action mails. Each template is rendered by
 * the renderer that sends them: a real mail sent through sendOobCode equals its preview once the
 * placeholder link and address are swapped for the real ones. Raw HTTP with the admin key or a
 * console session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
const admin = () => ({ authorization: `Bearer ${server.adminKey}` });
const templatesUrl = (project = server.projectId, query = '') => `${server.url}/hearth/v1/console/projects/${project}/mailTemplates${query}`;
async function getJson(url: string, headers: Record<string, string> = admin()): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.json() };
}
const firstLink = (text: string) => text.split('\n').find((line) => line.startsWith('http'))!;

before(async () => {
  server = await startHearth({ dev: true });
  await patchProjectConfig(server, { mail: { projectName: 'Gap Tester', from: '"Gap Tester" <hello@gaps.example>' } }, 'mail.projectName,mail.from');
});
after(async () => server.close());

describe('mailTemplates', () => {
  test('four action mails, with the sender and a placeholder link that carries no usable code', async () => {
    const answer = await getJson(templatesUrl());
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.sender, '"Gap Tester" <hello@gaps.example>');
    assert.deepEqual(answer.body.templates.map((t: any) => t.requestType).sort(), ['EMAIL_SIGNIN', 'PASSWORD_RESET', 'VERIFY_AND_CHANGE_EMAIL', 'VERIFY_EMAIL']);
    for (const template of answer.body.templates) {
      assert.match(template.subject, /Gap Tester/);
      const link = new URL(firstLink(template.text));
      assert.equal(link.pathname, '/__/auth/action');
      assert.equal(link.searchParams.get('oobCode'), 'PREVIEW-CODE');
      assert.ok(template.html.includes('PREVIEW-CODE'), template.html);
    }
  });

  test('a password reset mail actually sent equals its preview, link and address aside', async () => {
    const email = uniqueEmail('preview');
    assert.equal((await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email, password: 'secret-pass-1' })).status, 200);
    assert.equal((await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=any`, { requestType: 'PASSWORD_RESET', email })).status, 200);
    const outbox = await getJson(`${server.url}/hearth/v1/projects/${server.projectId}/outbox`);
    const sent = outbox.body.messages.filter((mail: any) => mail.to === email && mail.requestType === 'PASSWORD_RESET').at(-1);
    assert.ok(sent, JSON.stringify(outbox.body));
    const preview = (await getJson(templatesUrl())).body.templates.find((t: any) => t.requestType === 'PASSWORD_RESET');
    const [previewLink, sentLink] = [firstLink(preview.text), firstLink(sent.text)];
    const real = (text: string, escape: (s: string) => string) => text.replaceAll(escape(previewLink), escape(sentLink)).replaceAll('user@example.com', email);
    assert.equal(preview.subject, sent.subject);
    assert.equal(real(preview.text, (s) => s), sent.text);
    assert.equal(real(preview.html, (s) => s.replaceAll('&', '&amp;')), sent.html);
    assert.equal(sent.from, '"Gap Tester" <hello@gaps.example>');
  });

  test('languageCode picks the catalogue (fr), unknown languages fall back to English, bad tags are 400', async () => {
    const fr = await getJson(templatesUrl(server.projectId, '?languageCode=fr-CA'));
    assert.equal(fr.status, 200);
    assert.equal(fr.body.languageCode, 'fr');
    assert.match(fr.body.templates.find((t: any) => t.requestType === 'PASSWORD_RESET').subject, /Réinitialisez/);
    const unknown = await getJson(templatesUrl(server.projectId, '?languageCode=xx'));
    assert.equal(unknown.body.languageCode, 'en');
    for (const query of ['?languageCode=%3Cscript%3E', '?languageCode=', `?languageCode=${'a'.repeat(40)}`, '?languageCode=en&languageCode=fr']) {
      const answer = await getJson(templatesUrl(server.projectId, query));
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
    const badProject = await getJson(templatesUrl('bad_project!'));
    assert.equal(badProject.status, 400);
    assert.equal(badProject.body.error.status, 'INVALID_ARGUMENT');
  });

  test('only operators: no credential 401, another site 403, the console cookie needs its header', async () => {
    assert.equal((await getJson(templatesUrl(), {})).status, 401);
    assert.equal((await getJson(templatesUrl(), { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await getJson(templatesUrl(), { ...admin(), origin: 'http://evil.example' })).status, 403);
    assert.equal((await getJson(templatesUrl(), { ...admin(), 'sec-fetch-site': 'cross-site' })).status, 403);
    const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.equal((await getJson(templatesUrl(), { cookie, 'x-hearth-console': '1' })).status, 200);
    assert.equal((await getJson(templatesUrl(), { cookie })).status, 403);
  });
});
