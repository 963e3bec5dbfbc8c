import type { Logger } from 'pino';
import type { Doc } from '../../firestore/core/documents.js';
import { evaluateStorageRules, type StorageObjectFields } from '../../firestore/rules/index.js';
import type { RulesRegistry } from '../../firestore/security/rules-registry.js';
import type { StoredObject } from '../../storage/files-store.js';
import { etagOf } from '../core/object-metadata.js';
import type { FilesCaller, StorageAccess } from './storage-guard.js';

export interface StorageRulesDeps {
  registry: RulesRegistry;
  /** A document of the project's database, for `firestore.get()` / `exists()` (through Firestore's lookup cache). */
  readDocument(projectId: string, databaseId: string, path: string): Promise<Doc | undefined>;
  logger: Logger;
}

/** Google's limit of document lookups per storage request. */
const lookupLimit = 10;

/**
 * The storage rules in force for a bucket (its release `firebase.storage/<bucket>`, else the
 * project's `firebase.storage`), judged on Hearth's rules engine; undefined when none are released
 * (the regime without rules decides). A denial's reason goes to the operator's log, never to the caller.
 */
export function storageRulesJudge(deps: StorageRulesDeps): (caller: FilesCaller, access: StorageAccess) => Promise<boolean | undefined> {
  return async (caller, access) => {
    const rules = await deps.registry.storageRulesFor(access.projectId, access.bucket);
    if (!rules) return undefined;
    let allowed = false;
    let reason: string;
    try {
      ({ allowed, reason } = await evaluateStorageRules(rules, {
        projectId: access.projectId,
        bucket: access.bucket,
        method: access.method,
        path: access.path,
        auth: caller.kind === 'user' ? { uid: caller.claims.sub, token: caller.claims as Record<string, unknown> } : null,
        time: Date.now() * 1000,
        ...(access.resource ? { resource: rulesFields(access.resource) } : {}),
        ...(access.requestResource ? { requestResource: rulesFields(access.requestResource) } : {}),
        firestore: { get: (databaseId, path) => deps.readDocument(access.projectId, databaseId, path) },
        budget: { limit: lookupLimit, seen: new Set() },
      }));
    } catch (error) {
      // The evaluator's own failure denies, as any error in a rule does.
      deps.logger.error({ err: error }, 'storage rules evaluation failed');
      reason = 'evaluation failed';
    }
    if (!allowed) {
      deps.logger.info({ project: access.projectId, bucket: access.bucket, method: access.method, path: access.path, uid: caller.kind === 'user' ? caller.claims.sub : null, reason }, 'storage rules denied a request');
    }
    return allowed;
  };
}

/** An object's metadata as storage rules see it (`resource`, `request.resource`). */
export function rulesFields(object: StoredObject): StorageObjectFields {
  return {
    name: object.name,
    bucket: object.bucket,
    generation: object.generation || '0',
    metageneration: object.metageneration,
    size: object.size,
    timeCreated: object.timeCreated,
    updated: object.updated,
    md5Hash: object.md5Hash,
    crc32c: object.crc32c,
    etag: etagOf(object),
    ...(object.contentType !== undefined ? { contentType: object.contentType } : {}),
    ...(object.contentEncoding !== undefined ? { contentEncoding: object.contentEncoding } : {}),
    ...(object.contentDisposition !== undefined ? { contentDisposition: object.contentDisposition } : {}),
    ...(object.contentLanguage !== undefined ? { contentLanguage: object.contentLanguage } : {}),
    ...(object.cacheControl !== undefined ? { cacheControl: object.cacheControl } : {}),
    metadata: object.customMetadata ?? {},
  };
}
