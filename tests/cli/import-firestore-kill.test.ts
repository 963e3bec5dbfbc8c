/**
 * `hearth import firestore` is all or nothing: killed (SIGKILL) in the middle of a large import it
 * leaves the target database without a document, and the same import run again takes all of them.
 * A corrupt export (one flipped byte) is refused with the file and offset, nothing written.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ExportWriter } from '../../packages/server/src/firestore/exports/export-layout.js';
import { documentToEntity } from '../../packages/server/src/firestore/exports/entity-values.js';
import type { Value } from '../../packages/server/src/firestore/core/values.js';
import { repoRoot, tempDataDir } from '../helpers/hearth.js';
import { hearthCli } from '../helpers/firestore-export-differential.js';
import { storedRows, testDatabaseUrl } from '../helpers/test-backend.js';

const count = 60_000;

function writeLargeExport(): string {
  const folder = join(tempDataDir(), 'big');
  const writer = new ExportWriter(folder);
  for (let i = 0; i < count; i++) {
    const fields = new Map<string, Value>([
      ['n', { type: 'integer', value: BigInt(i) }],
      ['name', { type: 'string', value: `item ${i % 997}` }],
      ['tags', { type: 'array', values: [{ type: 'string', value: `t${i % 7}` }] }],
    ]);
    writer.add(documentToEntity('demo-kill', '(default)', `items/i${i}`, fields));
  }
  writer.close();
  return folder;
}

async function documentsIn(dataDir: string): Promise<number> {
  const rows = await storedRows(dataDir, "SELECT count(*) AS n FROM fs_documents WHERE db = 'demo-kill/(default)'");
  return Number(rows[0]!.n);
}

test('a killed import leaves the target empty; run again, it imports everything', async () => {
  const folder = writeLargeExport();
  const dataDir = tempDataDir();
  const databaseUrl = await testDatabaseUrl(dataDir);
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'packages/server/src/main.ts'), 'import', 'firestore', folder, '--data', dataDir, ...(databaseUrl ? ['--database-url', databaseUrl] : [])], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Killed once it says it has written some documents (in its one transaction), well before the end.
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/importing: \d+ documents/.test(stderr)) resolve();
    });
    child.once('exit', () => reject(new Error(`the import ended before it could be killed (make the export larger):\n${stderr}`)));
  });
  child.kill('SIGKILL');
  await exited;
  assert.doesNotMatch(stderr, /Imported/);
  assert.equal(await documentsIn(dataDir), 0);

  const again = await hearthCli(['import', 'firestore', folder], dataDir);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`Imported ${count} document\\(s\\) into demo-kill/\\(default\\)`));
  assert.equal(await documentsIn(dataDir), count);
});

test('a corrupt export is refused with where it is broken, nothing written', async () => {
  const folder = join(tempDataDir(), 'small');
  const writer = new ExportWriter(folder);
  for (let i = 0; i < 10; i++) writer.add(documentToEntity('demo-kill', '(default)', `items/i${i}`, new Map([['n', { type: 'integer', value: BigInt(i) }]])));
  writer.close();
  const output = join(folder, 'all_namespaces/all_kinds/output-0');
  const bytes = readFileSync(output);
  bytes[bytes.length - 3]! ^= 0xff;
  writeFileSync(output, bytes);
  const dataDir = tempDataDir();
  const refused = await hearthCli(['import', 'firestore', folder], dataDir);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /output-0: a record checksum does not match at byte \d+/);
  assert.equal(await documentsIn(dataDir), 0);

  const notAnExport = await hearthCli(['import', 'firestore', dataDir], dataDir);
  assert.equal(notAnExport.code, 1);
  assert.match(notAnExport.stderr, /no \.overall_export_metadata file/);
});
