/**
 * Moving out: documents written to Hearth, exported with `hearth export firestore`, started from by
 * Google's Firestore emulator (`--import-data`, as `firebase emulators:start --import` does): that
 * emulator answers 200 random queries exactly as an emulator the same documents were written to.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { assertNoMismatches, sortBySeedAndIndex } from '../helpers/firestore-differential-compare.js';
import { call, compareRandomQueries, exportDatabaseRoot, exportProject, hearthCli, seedEmulator } from '../helpers/firestore-export-differential.js';
import type { Dataset } from '../helpers/random-firestore.js';
import { join } from 'node:path';

const written: GoogleEmulator | undefined = await startGoogleEmulator();

describe('hearth export firestore: the emulator starts from it and answers the same', { skip: !written && 'the official Firestore emulator is not installed' }, () => {
  let hearth: TestHearth;
  let datasets: Map<number, Dataset>;
  let fromHearth: GoogleEmulator;
  let exportOutput: string;

  before(async () => {
    datasets = await seedEmulator(written!);
    hearth = await startHearth();
    for (const dataset of datasets.values()) {
      const writes = dataset.documents.map(({ name, fields }) => ({ update: { name, fields } }));
      const answer = await call({ label: 'Hearth', url: hearth.url }, 'POST', `${exportDatabaseRoot}:commit`, { writes });
      assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 500));
    }
    const folder = join(tempDataDir(), 'firestore_export');
    const exported = await hearthCli(['export', 'firestore', folder, '--project', exportProject], hearth.dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    exportOutput = exported.stderr;
    fromHearth = (await startGoogleEmulator({ args: [`--import-data=${join(folder, 'firestore_export.overall_export_metadata')}`] }))!;
  });

  after(async () => {
    await hearth?.close();
    await fromHearth?.stop();
    await written?.stop();
  });

  test('the export says how many documents it wrote', () => {
    const count = [...datasets.values()].reduce((sum, dataset) => sum + dataset.documents.length, 0);
    assert.match(exportOutput, new RegExp(`Exported ${count} document\\(s\\) of ${exportProject}/\\(default\\)`));
  });

  test('200 random queries get the same documents in the same order', async () => {
    const subject = { label: "the emulator started from Hearth's export", url: fromHearth.url };
    const { mismatches, answered } = await compareRandomQueries({ label: 'emulator', url: written!.url }, subject, datasets, 100);
    assertNoMismatches(subject, sortBySeedAndIndex(mismatches));
    assert.ok(answered >= 150, `only ${answered} of 200 queries were answered by the emulator`);
  });
});
