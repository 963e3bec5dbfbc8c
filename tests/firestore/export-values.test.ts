/**
 * Every value type through a move: documents written with firebase-admin to Google's Firestore
 * emulator (every type, nested maps and arrays, a subcollection, a numeric id, a named database),
 * exported by the emulator, imported with `hearth import firestore`: Hearth returns exactly the
 * emulator's fields (int64 extremes, NaN, -0, timestamps to the microsecond, bytes, references,
 * geopoints, vectors); the named database exported again by Hearth starts Google's emulator with the
 * same fields. An import into a database that has documents is refused and writes nothing.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { FieldValue, GeoPoint, getFirestore, setLogFunction, Timestamp, type Firestore } from 'firebase-admin/firestore';
import { startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { call, emulatorExport, hearthCli } from '../helpers/firestore-export-differential.js';
import { storedRows } from '../helpers/test-backend.js';

setLogFunction(null);
process.env.METADATA_SERVER_DETECTION ??= 'none';

const projectId = 'demo-values';
const root = (database: string) => `projects/${projectId}/databases/${database}/documents`;
const emulator: GoogleEmulator | undefined = await startGoogleEmulator();

const names = ['people/ada', 'people/ada/notes/n1', 'people/__id7__', 'people/extremes'];

describe('hearth import firestore: every value as the emulator exported it', { skip: !emulator && 'the official Firestore emulator is not installed' }, () => {
  let app: App;
  let hearth: TestHearth;
  let dataDir: string;
  let defaultExport: string;

  before(async () => {
    const saved = process.env.FIRESTORE_EMULATOR_HOST;
    process.env.FIRESTORE_EMULATOR_HOST = emulator!.hostPort;
    app = initializeApp({ projectId }, `values-${Date.now()}`);
    const db = getFirestore(app);
    const other: Firestore = getFirestore(app, 'other');
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
    const everything = {
      text: 'héllo 😀',
      int: 42,
      double: 1.5,
      yes: true,
      nothing: null,
      when: new Timestamp(1_609_556_645, 123_456_000),
      before1970: new Timestamp(-1, 999_999_000),
      bytes: Buffer.from([0, 1, 2, 255]),
      ref: db.doc('people/ada/notes/n1'),
      place: new GeoPoint(51.5, -0.12),
      embedding: FieldValue.vector([1, 2.5, -3]),
      nested: { a: { b: [1, { c: 'deep', d: [] }, null] }, 'dotted.key': {} },
      emptyList: [],
      emptyMap: {},
      mixed: [1, 'two', 3.5, false, Buffer.from('x'), new GeoPoint(0, 0)],
    };
    await db.doc('people/ada').set(everything);
    await db.doc('people/ada/notes/n1').set({ title: 'sub', at: Timestamp.fromMillis(0) });
    await db.doc('people/__id7__').set({ numericId: true });
    await other.doc('things/t1').set({ back: db.doc('people/ada'), here: other.doc('things/t1') });
    // What the SDK cannot write (its integers are JS numbers): int64 extremes, NaN, -0, infinities.
    const extremes = await call({ label: 'emulator', url: emulator!.url }, 'POST', `${root('(default)')}:commit`, {
      writes: [{ update: { name: `${root('(default)')}/people/extremes`, fields: {
        max: { integerValue: '9223372036854775807' }, min: { integerValue: '-9223372036854775808' },
        nan: { doubleValue: 'NaN' }, negativeZero: { doubleValue: -0 }, inf: { doubleValue: 'Infinity' }, ninf: { doubleValue: '-Infinity' },
      } } }],
    });
    assert.equal(extremes.status, 200, JSON.stringify(extremes.body));
    defaultExport = await emulatorExport(emulator!, projectId);
    const otherExport = await emulatorExport(emulator!, projectId, 'other');
    dataDir = tempDataDir();
    for (const folder of [defaultExport, otherExport]) {
      const imported = await hearthCli(['import', 'firestore', folder], dataDir);
      assert.equal(imported.code, 0, imported.stderr);
    }
    hearth = await startHearth({ dataDir });
  });

  after(async () => {
    if (app) await deleteApp(app);
    await hearth?.close();
    await emulator?.stop();
  });

  async function documents(url: string, database: string, paths: string[]): Promise<unknown[]> {
    const answer = await call({ label: url, url }, 'POST', `projects/${projectId}/databases/${database}/documents:batchGet`, { documents: paths.map((path) => `${root(database)}/${path}`) });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body as Array<{ found?: { name: string; fields: unknown } }>).map((entry) => {
      assert.ok(entry.found, `missing from ${url}: ${JSON.stringify(entry)}`);
      return { name: entry.found.name, fields: entry.found.fields };
    }).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  test('the default database: every field exactly as the emulator returns it', async () => {
    const [fromEmulator, fromHearth] = await Promise.all([documents(emulator!.url, '(default)', names), documents(hearth.url, '(default)', names)]);
    assert.deepEqual(fromHearth, fromEmulator);
  });

  test('a named database keeps its name and its references', async () => {
    const [fromEmulator, fromHearth] = await Promise.all([documents(emulator!.url, 'other', ['things/t1']), documents(hearth.url, 'other', ['things/t1'])]);
    assert.deepEqual(fromHearth, fromEmulator);
  });

  test("a named database out with hearth export firestore: Google's emulator starts from it with the same fields", async () => {
    const folder = join(tempDataDir(), 'other_export');
    const exported = await hearthCli(['export', 'firestore', folder, '--project', projectId, '--database', 'other'], dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    const fromHearth = (await startGoogleEmulator({ args: [`--import-data=${join(folder, 'other_export.overall_export_metadata')}`] }))!;
    try {
      const [original, restarted] = await Promise.all([documents(emulator!.url, 'other', ['things/t1']), documents(fromHearth.url, 'other', ['things/t1'])]);
      assert.deepEqual(restarted, original);
    } finally {
      await fromHearth.stop();
    }
  });

  test('into a database with documents: refused, nothing written', async () => {
    const before = await storedRows(dataDir, 'SELECT count(*) AS n FROM fs_documents');
    await hearth.close();
    try {
      const again = await hearthCli(['import', 'firestore', defaultExport], dataDir);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /is not empty.*nothing was written/);
      assert.deepEqual(await storedRows(dataDir, 'SELECT count(*) AS n FROM fs_documents'), before);
      // Into another database of the project, by name: taken.
      const copy = await hearthCli(['import', 'firestore', defaultExport, '--database', 'copy'], dataDir);
      assert.equal(copy.code, 0, copy.stderr);
      assert.match(copy.stderr, /Imported 4 document\(s\) into demo-values\/copy/);
    } finally {
      hearth = await startHearth({ dataDir });
    }
    const copied = await documents(hearth.url, 'copy', ['people/ada']);
    const original = (await documents(hearth.url, '(default)', ['people/ada']))[0] as { fields: Record<string, { referenceValue?: string }> };
    // References into the exported database now point into the copy.
    assert.equal((copied[0] as typeof original).fields.ref!.referenceValue, `${root('copy')}/people/ada/notes/n1`);
    assert.equal(original.fields.ref!.referenceValue, `${root('(default)')}/people/ada/notes/n1`);
  });
});
