/**
 * The overview's "keys about to rotate" warning, over raw HTTP with the admin key: none on a
 * server whose keys were just made (none either before its first key: that one signs at once) (the next rotation is a day away), one per key ring when the
 * server's clock stands within two hours of the handover (ID token keys rotate daily, session
 * cookie keys weekly, each new key published an hour before it signs).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const hour = 60 * 60_000;
let fresh: TestHearth;
let later: TestHearth;
let shiftMs = 0;

before(async () => {
  [fresh, later] = await Promise.all([startHearth({ dev: false }), startHearth({ dev: false, clock: () => Date.now() + shiftMs })]);
  // A ring makes its first key when first needed: publishing the keys makes both rings' first.
  for (const server of [fresh, later]) {
    for (const path of ['/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com', '/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys']) {
      const published = await fetch(`${server.url}${path}`);
      assert.equal(published.status, 200, path);
      assert.ok(Object.keys((await published.json()) as object).length > 0, path);
    }
  }
});
after(async () => {
  await Promise.all([fresh?.close(), later?.close()]);
});

async function warnings(server: TestHearth): Promise<string[]> {
  const answer = await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/overview`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.equal(answer.status, 200);
  return ((await answer.json()) as { warnings: string[] }).warnings;
}

const rotation = (text: string) => /signing keys are about to rotate/.test(text);

test('no warning while the keys are young', async () => {
  assert.deepEqual((await warnings(fresh)).filter(rotation), []);
});

test('within two hours of the daily rotation, the ID token keys are about to rotate; within two of the weekly, the cookies too', async () => {
  shiftMs = 22.5 * hour;
  const daily = (await warnings(later)).filter(rotation);
  assert.equal(daily.length, 1, daily.join('\n'));
  assert.match(daily[0]!, /^ID token signing keys are about to rotate: a new key is published at \S+Z and signs from \S+Z\. Servers that verify with the published keys \(firebase-admin does\) need nothing/);
  const [publishedAt, signsFrom] = [...daily[0]!.matchAll(/(\d{4}-\d\d-\d\dT[\d:.]+Z)/g)].map((m) => Date.parse(m[1]!));
  assert.equal(signsFrom! - publishedAt!, hour, 'a new key is published an hour before it signs');

  shiftMs = 7 * 24 * hour - 30 * 60_000;
  const both = (await warnings(later)).filter(rotation);
  assert.deepEqual(both.map((w) => w.split(' signing keys')[0]), ['ID token', 'Session cookie']);
  // Past the age limit the rotation is at the next check: published now.
  assert.match(both[0]!, /a new key is published and signs from/);
});
