import type { Logger } from 'pino';
import type { FirestoreCaller } from '../../firestore/security/guard.js';
import type { StoredObject } from '../../storage/files-store.js';

/** Who calls: the administrator (rules do not apply), a verified user, or nobody. */
export type FilesCaller = FirestoreCaller;

/** The methods storage rules grant: `read` = get + list, `write` = create + update + delete. */
export type StorageMethod = 'get' | 'list' | 'create' | 'update' | 'delete';

/** One access to judge, as Google's storage rules see it. */
export interface StorageAccess {
  projectId: string;
  bucket: string;
  method: StorageMethod;
  /** get/create/update/delete: the object's name; list: the prefix without its trailing `/`. */
  path: string;
  /** `resource`: the stored object (absent: none). */
  resource?: StoredObject;
  /** `request.resource`: the object as the write would leave it (create, update). */
  requestResource?: StoredObject;
}

/**
 * What a project's storage allows without rules, and with them (rules-guard.ts): the
 * administrator always; otherwise, until storage rules are released, everyone in --dev (as
 * Google's emulator with open rules) and no one in production.
 */
export interface StorageGuard {
  allows(caller: FilesCaller, access: StorageAccess): Promise<boolean>;
  /** One line for the start banner. */
  summary(projectId: string): Promise<string>;
}

export class RegimeGuard implements StorageGuard {
  constructor(
    private readonly options: { dev: boolean; logger: Logger },
    /** The rules in force for a bucket's project, when any (rules-guard.ts supplies it). */
    private readonly rules?: (caller: FilesCaller, access: StorageAccess) => Promise<boolean | undefined>,
  ) {}

  async allows(caller: FilesCaller, access: StorageAccess): Promise<boolean> {
    if (caller.kind === 'admin') return true;
    const judged = await this.rules?.(caller, access);
    if (judged !== undefined) return judged;
    if (!this.options.dev) {
      this.options.logger.info({ project: access.projectId, bucket: access.bucket, method: access.method }, 'storage is closed until storage rules are released');
    }
    return this.options.dev;
  }

  async summary(): Promise<string> {
    return this.options.dev ? 'none: storage is open to every caller (dev mode)' : 'none: storage is closed to all but the admin until storage rules are released';
  }
}
