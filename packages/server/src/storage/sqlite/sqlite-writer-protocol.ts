import type { PackedWrites } from './sqlite-write-packing.js';

/** What the writer thread is started with. */
export interface WriterData {
  file: string;
  /** Tests only: see holdForTest in sqlite-writer-thread.ts. */
  latch?: Int32Array;
}

export type WriterRequest =
  | { kind: 'write'; id: number; writes: PackedWrites }
  | { kind: 'close' };

export type WriterReply = { id: number; ok: true } | { id: number; ok: false; message: string; code?: string };
