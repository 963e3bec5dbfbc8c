import type { Readable } from 'node:stream';

/**
 * Where objects' bytes live: a folder in the data directory (disk-byte-store.ts) or an S3 service.
 * Blobs are immutable and named by random keys, never by object names (so a name cannot reach the
 * file system or another object); the metadata store says which blob is which object's. A write
 * resolves only once the bytes are durable, and leaves nothing behind when it fails.
 */
export interface ByteStore {
  /** Writes the whole stream as a new blob; its key once durable. */
  write(source: Readable): Promise<string>;
  /** The blob's bytes from `start` to `end` (inclusive), or all of them. */
  read(blobKey: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Removes a blob; one already gone is not an error. */
  delete(blobKey: string): Promise<void>;

  /**
   * Resumable uploads: bytes arrive in chunks, possibly on different instances, and become a blob
   * at the end. The staging state is JSON kept with the session in the metadata store.
   */
  stageBegin(): Promise<string>;
  /** Appends a chunk at `offset` (the bytes acknowledged so far; anything staged past it is dropped); the new state once durable. */
  stageAppend(staging: string, offset: number, source: Readable): Promise<string>;
  /** Turns the staged bytes into a blob; its key. */
  stageFinish(staging: string, size: number): Promise<string>;
  stageDiscard(staging: string): Promise<void>;

  /** Blobs older than `olderThan` that no metadata points at (a crash between the bytes and their metadata). */
  sweep?(isReferenced: (blobKey: string) => Promise<boolean>, olderThan?: number): Promise<number>;
  close(): Promise<void>;
}
