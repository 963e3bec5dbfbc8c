/**
 * Layers only reach down: a folder of packages/server/src imports from its own folder and from
 * folders below it, never from one above. Lowest first:
 *   storage   persistence (SQLite, PostgreSQL): knows no protocol and no domain
 *   http      the one HTTP app, the wire's error shape, CORS, metrics
 *   auth      the identity domain
 *   firestore the document database (verifies ID tokens through auth's types)
 *   files     file storage (rules on firestore's engine)
 *   functions server code (triggers from firestore, files and auth)
 *   console   the operator console: administers every domain
 *   web       the web app's routes
 *   cli       commands on a data folder
 *   workers   `--workers N`: the primary process and a worker's side of it (main.ts starts them)
 * The files at the root (main.ts, server.ts, config.ts, start-banner.ts, ...) compose them all.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/hearth.js';

const sourceRoot = join(repoRoot, 'packages/server/src');
const layers = ['storage', 'http', 'auth', 'firestore', 'files', 'functions', 'console', 'web', 'cli', 'workers'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

/** The top folder of a source file ('' for the composition root). */
function layerOf(path: string): string {
  const parts = relative(sourceRoot, path).split('/');
  return parts.length > 1 ? parts[0]! : '';
}

function relativeImports(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/g), ...source.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)];
  return specifiers.map((match) => match[1]!);
}

test('every top folder of the server is a known layer', () => {
  const folders = readdirSync(sourceRoot).filter((entry) => statSync(join(sourceRoot, entry)).isDirectory());
  assert.deepEqual(folders.filter((folder) => !layers.includes(folder)), []);
});

test('no import from a lower layer into a higher one', () => {
  const violations: string[] = [];
  for (const file of sourceFiles(sourceRoot)) {
    const from = layerOf(file);
    if (from === '') continue;
    for (const specifier of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier);
      const to = layerOf(target);
      if (to === '' || to === from) {
        if (to === '' && relative(sourceRoot, target).split('/').length === 1) violations.push(`${relative(sourceRoot, file)} -> ${specifier} (the composition root)`);
        continue;
      }
      if (layers.indexOf(to) > layers.indexOf(from)) violations.push(`${relative(sourceRoot, file)} (${from}) -> ${specifier} (${to})`);
    }
  }
  assert.deepEqual(violations, []);
});

test('the checker sees a reach upward', () => {
  // The same rule on a made-up pair, so a broken parser cannot pass the real check vacuously.
  const imports = relativeImports("import { x } from '../../firestore/core/documents.js';\nimport type { Y } from './y.js';\nconst z = await import('../auth/errors.js');");
  assert.deepEqual(imports, ['../../firestore/core/documents.js', './y.js', '../auth/errors.js']);
  const file = join(sourceRoot, 'storage/postgres/example.ts');
  assert.equal(layerOf(resolve(dirname(file), imports[0]!)), 'firestore');
  assert.ok(layers.indexOf('firestore') > layers.indexOf(layerOf(file)));
});
