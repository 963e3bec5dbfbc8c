import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import { open, readdir, rename, rm, stat, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteStore } from './byte-store.js';

/** Keys are 32 hex characters; anything else never reaches the file system. */
const keyPattern = /^[0-9a-f]{32}$/;

/**
 * Blobs as files under `<data>/files`: `blobs/<2 hex>/<key>`, written first to `tmp/` and
 * fsynced, then renamed into place and the folder fsynced, so an acknowledged blob survives
 * kill -9 or a power cut and a torn write is at most a temporary file (removed at the next start).
 * Resumable uploads append to `staging/<key>`, fsynced before each chunk is acknowledged.
 */
export class DiskByteStore implements ByteStore {
  private readonly tmp: string;
  private readonly blobs: string;
  private readonly staging: string;

  constructor(readonly root: string) {
    this.tmp = join(root, 'tmp');
    this.blobs = join(root, 'blobs');
    this.staging = join(root, 'staging');
    for (const dir of [root, this.tmp, this.blobs, this.staging]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /**
   * Temporary files are writes that never finished: none of them was acknowledged. With
   * `olderThan`, only those last written before it (other processes may be writing theirs).
   */
  async clearTemporary(olderThan?: number): Promise<void> {
    for (const name of await readdir(this.tmp)) {
      const path = join(this.tmp, name);
      if (olderThan !== undefined) {
        const written = await stat(path).then((info) => info.mtimeMs, () => undefined);
        // Gone already, or still being written by another process.
        if (written === undefined || written >= olderThan) continue;
      }
      await rm(path, { force: true });
    }
  }

  async write(source: Readable): Promise<string> {
    const key = newKey();
    const temporary = join(this.tmp, key);
    try {
      await writeDurably(temporary, source, 'wx');
      const folder = join(this.blobs, key.slice(0, 2));
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      await rename(temporary, join(folder, key));
      await syncFolder(folder);
      return key;
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async read(blobKey: string, range?: { start: number; end: number }): Promise<Readable> {
    const path = this.blobPath(blobKey);
    // Opened before answering, so a missing blob is an error here rather than mid-response.
    const handle = await open(path, 'r');
    return createReadStream('', { fd: handle, autoClose: true, highWaterMark: ioBytes, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async delete(blobKey: string): Promise<void> {
    await rm(this.blobPath(blobKey), { force: true });
  }

  async stageBegin(): Promise<string> {
    const key = newKey();
    const handle = await open(join(this.staging, key), 'wx', 0o600);
    await handle.close();
    return JSON.stringify({ key });
  }

  async stageAppend(staging: string, offset: number, source: Readable): Promise<string> {
    const path = this.stagingPath(staging);
    // A chunk written but never acknowledged (the process died before its commit) is dropped.
    if ((await stat(path)).size !== offset) await truncate(path, offset);
    try {
      await writeDurably(path, source, 'a');
    } catch (error) {
      await truncate(path, offset).catch(() => undefined);
      throw error;
    }
    return staging;
  }

  async stageFinish(staging: string, size: number): Promise<string> {
    const path = this.stagingPath(staging);
    if ((await stat(path)).size !== size) await truncate(path, size);
    const key = newKey();
    const folder = join(this.blobs, key.slice(0, 2));
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    await rename(path, join(folder, key));
    await syncFolder(folder);
    return key;
  }

  async stageDiscard(staging: string): Promise<void> {
    await rm(this.stagingPath(staging), { force: true });
  }

  /**
   * Blobs written before `olderThan` that no metadata points at: a crash between a blob's rename
   * and its metadata commit leaves one. Younger blobs may be an upload about to commit: never touched.
   */
  async sweep(isReferenced: (blobKey: string) => Promise<boolean>, olderThan = Date.now()): Promise<number> {
    let removed = 0;
    for (const folder of await readdir(this.blobs)) {
      for (const key of await readdir(join(this.blobs, folder))) {
        const path = join(this.blobs, folder, key);
        if (!keyPattern.test(key) || (await stat(path)).mtimeMs >= olderThan || (await isReferenced(key))) continue;
        await unlink(path).catch(() => undefined);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}

  private blobPath(blobKey: string): string {
    if (!keyPattern.test(blobKey)) throw new Error('not a blob key');
    return join(this.blobs, blobKey.slice(0, 2), blobKey);
  }

  private stagingPath(staging: string): string {
    const { key } = JSON.parse(staging) as { key: unknown };
    if (typeof key !== 'string' || !keyPattern.test(key)) throw new Error('not a staging key');
    return join(this.staging, key);
  }
}

function newKey(): string {
  return randomBytes(16).toString('hex');
}

/** Reads and writes go in pieces this big: one thread-pool hop per MiB rather than per 64 KiB chunk. */
const ioBytes = 1024 * 1024;

/**
 * Streams into the file (created 0600), then fsyncs it before resolving. The request's chunks are
 * gathered into writes of up to 1 MiB; reading waits for each write, so the client is paced by the disk.
 */
async function writeDurably(path: string, source: Readable, flags: 'wx' | 'a'): Promise<void> {
  const handle = await open(path, flags, 0o600);
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const chunk of source) {
      pending.push(chunk as Buffer);
      pendingBytes += (chunk as Buffer).length;
      if (pendingBytes >= ioBytes) {
        await handle.writev(pending);
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pendingBytes) await handle.writev(pending);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A rename is durable only once its folder is fsynced. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

