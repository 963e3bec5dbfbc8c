/**
 * What Hearth reads from a code base is user code's output: the manifest is checked (names Google
 * would not deploy, unreadable JSON, unknown triggers listed as not run), document patterns match
 * as firebase-functions means them ({x} one segment, {x=**} the rest, nothing shorter or longer),
 * and an update's field mask quotes field names that are not plain identifiers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManifestError, parseManifest } from '../../packages/server/src/functions/manifest.js';
import { compileDocumentPattern } from '../../packages/server/src/functions/firestore-triggers.js';
import { changedFields } from '../../packages/server/src/functions/firestore-event-shapes.js';
import { answerOf } from '../../packages/server/src/functions/blocking-calls.js';

test('a manifest that is not one is refused with a ManifestError', () => {
  assert.throws(() => parseManifest('not json'), ManifestError);
  assert.throws(() => parseManifest('[]'), ManifestError);
  assert.throws(() => parseManifest('{"endpoints": 3}'), ManifestError);
  for (const name of ['../etc', 'a/b', '', '__proto__x?', 'x'.repeat(100), '1abc']) {
    assert.throws(() => parseManifest(JSON.stringify({ endpoints: { [name]: { httpsTrigger: {} } } })), ManifestError, name);
  }
});

test('endpoints are read by kind; what Hearth does not run is listed as such', () => {
  const endpoints = parseManifest(JSON.stringify({
    endpoints: {
      a: { platform: 'gcfv2', eventTrigger: { eventType: 'google.cloud.firestore.document.v1.created', eventFilters: { database: 'other', namespace: '(default)' }, eventFilterPathPatterns: { document: 'x/{id}' }, retry: true }, timeoutSeconds: 9, region: ['europe-west1'] },
      b: { platform: 'gcfv1', eventTrigger: { eventType: 'providers/cloud.firestore/eventTypes/document.write', eventFilters: { resource: 'projects/p/databases/(default)/documents/y/{id}' } } },
      c: { scheduleTrigger: { schedule: 'every 5 minutes' } },
      d: { eventTrigger: { eventType: 'google.cloud.pubsub.topic.v1.messagePublished' } },
      e: { eventTrigger: { eventType: 'providers/cloud.firestore/eventTypes/document.create', eventFilters: { resource: 'nonsense' } } },
      f: { eventTrigger: { eventType: 'google.cloud.firestore.document.v1.written', eventFilters: {} } },
      g: 'not an object',
      h: { timeoutSeconds: -5, httpsTrigger: {} },
    },
  }));
  const byName = new Map(endpoints.map((endpoint) => [endpoint.name, endpoint]));
  assert.deepEqual(byName.get('a'), { name: 'a', platform: 'gcfv2', kind: { type: 'firestore', eventType: 'google.cloud.firestore.document.v1.created', database: 'other', namespace: '(default)', document: 'x/{id}' }, retry: true, timeoutSeconds: 9, region: 'europe-west1' });
  assert.deepEqual(byName.get('b')!.kind, { type: 'firestore', eventType: 'providers/cloud.firestore/eventTypes/document.write', database: '(default)', namespace: '(default)', document: 'y/{id}' });
  for (const name of ['c', 'd', 'e', 'f']) assert.equal(byName.get(name)!.kind.type, 'unsupported', name);
  assert.equal(byName.has('g'), false);
  assert.equal(byName.get('h')!.timeoutSeconds, undefined);
});

test('document patterns match as firebase-functions means them', () => {
  const one = compileDocumentPattern('restaurants/{restaurantId}/ratings/{ratingId}');
  assert.deepEqual(one('restaurants/r1/ratings/x'), { restaurantId: 'r1', ratingId: 'x' });
  assert.equal(one('restaurants/r1/ratings'), undefined);
  assert.equal(one('restaurants/r1/ratings/x/more/y'), undefined);
  assert.equal(one('shops/r1/ratings/x'), undefined);
  const rest = compileDocumentPattern('users/{path=**}');
  assert.deepEqual(rest('users/u1'), { path: 'u1' });
  assert.deepEqual(rest('users/u1/notes/n1'), { path: 'u1/notes/n1' });
  assert.equal(rest('users'), undefined);
  const exact = compileDocumentPattern('config/main');
  assert.deepEqual(exact('config/main'), {});
  assert.equal(exact('config/other'), undefined);
});

test('an update mask names the changed top-level fields, quoted when they must be', () => {
  const at = { createTime: 1, updateTime: 2 };
  assert.deepEqual(changedFields({ fields: { a: { integerValue: '1' }, 'b.c': { stringValue: 'x' }, same: { nullValue: null } }, ...at }, { fields: { a: { integerValue: '2' }, same: { nullValue: null }, 'we`ird': { booleanValue: true } }, ...at }), ['a', '`b.c`', '`we\\`ird`']);
  assert.deepEqual(changedFields(null, { fields: {}, ...at }), []);
});

test("a blocking function's answer is read by its update mask, and unreadable fields refuse the sign-in", () => {
  assert.deepEqual(answerOf({ userRecord: { displayName: 'x', photoURL: 'https://p', customClaims: { a: 1 }, disabled: true, updateMask: 'displayName,photoURL,customClaims' } }), { displayName: 'x', photoUrl: 'https://p', customClaims: { a: 1 } });
  assert.equal(answerOf({}), undefined);
  assert.equal(answerOf('nonsense'), undefined);
  assert.throws(() => answerOf({ userRecord: { customClaims: 'not an object', updateMask: 'customClaims' } }), /BLOCKING_FUNCTION_ERROR_RESPONSE/);
  assert.throws(() => answerOf({ userRecord: { passwordHash: 'x', updateMask: 'passwordHash' } }), /BLOCKING_FUNCTION_ERROR_RESPONSE/);
});
