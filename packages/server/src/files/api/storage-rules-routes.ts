import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RulesCompileError } from '../../firestore/rules/index.js';
import { storageRelease, type RulesRegistry } from '../../firestore/security/rules-registry.js';
import type { RulesSourceFile } from '../../storage/rules-store.js';
import { fileErrors } from '../core/file-errors.js';
import { isBucketName } from '../core/object-names.js';
import { readJson, streamBodies } from './files-plugin.js';

export interface StorageRulesRoutesDeps {
  registry: RulesRegistry;
  defaultProjectId: string;
  dev: boolean;
  isOwner(request: FastifyRequest): boolean;
}

const maxSourceBytes = 256 * 1024;

/**
 * Google's Storage emulator endpoint for rules (`PUT /internal/setRules`, what firebase-tools and
 * @firebase/rules-unit-testing call): one file is released as the default project's
 * `firebase.storage` (every bucket), several files each for its `resource` bucket. Open in --dev
 * as the emulator's is (except to pages on other origins); the administrator's otherwise.
 */
export async function registerStorageRulesRoutes(root: FastifyInstance, deps: StorageRulesRoutesDeps): Promise<void> {
  await root.register(async (app) => {
    streamBodies(app);
    app.put('/internal/setRules', async (request) => {
      if (request.fromForeignPage || (!deps.dev && !deps.isOwner(request))) throw fileErrors.adminOnly('v0');
      const body = (await readJson('v0', request)) as { rules?: { files?: unknown } };
      const files = body?.rules?.files;
      if (!Array.isArray(files) || files.length === 0) throw fileErrors.invalid('v0', "Request body must include 'rules.files' array");
      const parsed = files.map((file: unknown) => {
        const entry = file as { name?: unknown; content?: unknown; resource?: unknown };
        if (typeof entry?.name !== 'string' || typeof entry.content !== 'string') throw fileErrors.invalid('v0', "Each member of 'rules.files' array must contain 'name' and 'content'");
        if (Buffer.byteLength(entry.content) > maxSourceBytes) throw fileErrors.invalid('v0', `Rules source exceeds the ${maxSourceBytes / 1024} KiB limit.`);
        if (files.length > 1 && (typeof entry.resource !== 'string' || !isBucketName(entry.resource))) {
          throw fileErrors.invalid('v0', "Each member of 'rules.files' array must contain 'name', 'content', and 'resource'");
        }
        return { file: { name: entry.name, content: entry.content } satisfies RulesSourceFile, resource: typeof entry.resource === 'string' ? entry.resource : undefined };
      });
      try {
        for (const { file, resource } of parsed) {
          await deps.registry.deploy(deps.defaultProjectId, [file], parsed.length > 1 && resource ? `${storageRelease}/${resource}` : storageRelease);
        }
      } catch (error) {
        if (error instanceof RulesCompileError) throw fileErrors.invalid('v0', error.message);
        throw error;
      }
      return {};
    });
  });
}
