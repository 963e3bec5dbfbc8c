import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import { RulesCompileError } from '../rules/index.js';
import { firestoreFile, firestoreRelease, storageFile, type RulesRegistry } from './rules-registry.js';

/**
 * Releases a rules file's content to a project unless that exact content is already in force
 * (so restarts do not grow the history). Throws RulesCompileError for a broken file.
 */
export async function releaseRulesFile(registry: RulesRegistry, projectId: string, path: string, releaseName = firestoreRelease): Promise<'released' | 'unchanged'> {
  const content = readFileSync(path, 'utf8');
  const release = await registry.store.getRelease(projectId, releaseName);
  const current = release && (await registry.store.getRuleset(projectId, release.rulesetId));
  const file = current && (releaseName === firestoreRelease ? firestoreFile(current.files) : storageFile(current.files));
  if (file?.content === content) return 'unchanged';
  await registry.deploy(projectId, [{ name: basename(path), content }], releaseName);
  return 'released';
}

/**
 * `--rules FILE` (and `--storage-rules FILE` with release `firebase.storage`): released at start and again whenever the file changes. A broken file keeps
 * the rules in force and logs every issue with its line and column.
 */
export async function followRulesFile(registry: RulesRegistry, projectId: string, path: string, logger: Logger, releaseName = firestoreRelease): Promise<() => void> {
  // At start a broken file is an error the operator must see before anything is served.
  await releaseRulesFile(registry, projectId, path, releaseName);
  let reloading = Promise.resolve();
  const reload = () => {
    reloading = reloading.then(async () => {
      try {
        if ((await releaseRulesFile(registry, projectId, path, releaseName)) === 'released') logger.info({ file: path, projectId }, 'security rules reloaded');
      } catch (error) {
        if (error instanceof RulesCompileError) logger.error({ file: path, issues: error.issues }, `security rules not reloaded, the rules in force stay: ${error.message}`);
        else logger.error({ file: path, err: error }, 'security rules not reloaded, the rules in force stay');
      }
    });
  };
  // Polling survives editors that replace the file (rename) where fs.watch would lose it.
  watchFile(path, { interval: 500, persistent: false }, (now, before) => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) reload();
  });
  return () => unwatchFile(path);
}
