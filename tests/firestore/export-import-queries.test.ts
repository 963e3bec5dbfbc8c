/**
 * Moving in: documents written to Google's Firestore emulator, exported by it (its own export call,
 * the layout `gcloud firestore export` and `firebase emulators:export` write), imported with `hearth
 * import firestore`: Hearth answers 200 random queries (every filter, order, cursor, limit and
 * collection-group shape of the differential suite) exactly as the emulator does, order included.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { assertNoMismatches, sortBySeedAndIndex } from '../helpers/firestore-differential-compare.js';
import { compareRandomQueries, emulatorExport, exportProject, hearthCli, seedEmulator } from '../helpers/firestore-export-differential.js';
import type { Dataset } from '../helpers/random-firestore.js';

const emulator: GoogleEmulator | undefined = await startGoogleEmulator();

describe('hearth import firestore: an emulator export answers as the emulator', { skip: !emulator && 'the official Firestore emulator is not installed' }, () => {
  let hearth: TestHearth;
  let datasets: Map<number, Dataset>;
  let importOutput: string;

  before(async () => {
    datasets = await seedEmulator(emulator!);
    const exported = await emulatorExport(emulator!, exportProject);
    const dataDir = tempDataDir();
    const imported = await hearthCli(['import', 'firestore', exported], dataDir);
    assert.equal(imported.code, 0, imported.stderr);
    importOutput = imported.stderr;
    hearth = await startHearth({ dataDir });
  });

  after(async () => {
    await hearth?.close();
    await emulator?.stop();
  });

  test('the import says what it read and wrote', () => {
    const written = [...datasets.values()].reduce((sum, dataset) => sum + dataset.documents.length, 0);
    assert.match(importOutput, new RegExp(`Imported ${written} document\\(s\\) into ${exportProject}/\\(default\\) \\(exported from ${exportProject}/\\(default\\)\\): read ${written} record\\(s\\)`));
  });

  test('200 random queries get the same documents in the same order', async () => {
    const { mismatches, answered } = await compareRandomQueries({ label: 'emulator', url: emulator!.url }, { label: 'Hearth', url: hearth.url }, datasets, 100);
    assertNoMismatches({ label: 'Hearth', url: hearth.url }, sortBySeedAndIndex(mismatches));
    assert.ok(answered >= 150, `only ${answered} of 200 queries were answered by the emulator`);
  });
});
