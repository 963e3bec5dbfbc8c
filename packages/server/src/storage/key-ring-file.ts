import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KeyRingStore } from './key-ring-store.js';
import { writePrivateFileAtomically } from './private-files.js';

/**
 * A key ring in one private file (0600) of the data folder, written atomically. For one process
 * no lock is needed (its rotations run one at a time). Where several processes share the data
 * folder (--workers on SQLite), `exclusive` runs a synchronous step under a lock they all take (the
 * SQLite file's write lock): a change is decided on the text read before, and written only if the
 * file still holds that text; otherwise it is decided again on the new text, so two processes due
 * for a rotation at once add one key.
 */
export class KeyRingFile implements KeyRingStore {
  readonly shared: boolean;

  constructor(
    private readonly file: string,
    private readonly exclusive?: <T>(run: () => T) => Promise<T>,
  ) {
    this.shared = exclusive !== undefined;
  }

  async read(): Promise<string | undefined> {
    return this.readNow();
  }

  async update(change: (current: string | undefined) => Promise<string | undefined>): Promise<string | undefined> {
    for (;;) {
      const current = this.readNow();
      const next = await change(current);
      if (next === undefined) return current;
      const write = () => {
        if (this.readNow() !== current) return false;
        mkdirSync(dirname(this.file), { recursive: true });
        writePrivateFileAtomically(this.file, next);
        return true;
      };
      if (await (this.exclusive ? this.exclusive(write) : write())) return next;
    }
  }

  private readNow(): string | undefined {
    return existsSync(this.file) ? readFileSync(this.file, 'utf8') : undefined;
  }
}
