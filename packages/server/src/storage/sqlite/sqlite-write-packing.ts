/**
 * One group's statements as they cross to the writer thread. Every text and BLOB parameter is
 * written into one SharedArrayBuffer that the main thread keeps from group to group, so crossing
 * costs one copy of the bytes into memory that is already mapped, and the message itself is a few
 * typed arrays. Structured clone of the parameters (thousands of strings, a 6 MB group's worth) held
 * the event loop 23-53 ms a group, most of it faulting in fresh pages for the clone's own buffer.
 *
 * Reusing the buffer is safe because one group is in flight at a time (SqliteWriter) and the writer
 * has read everything it needs before it answers: the next group is packed only after that answer.
 * Both threads import this file.
 */

/** A statement parameter: how the batch holds it and how the writer binds it. */
export type Param = string | number | Buffer | null;

const Kind = { Null: 0, Number: 1, Text: 2, Blob: 3 } as const;

export interface PackedWrites {
  /** Each statement's index in the writer's list of statements. */
  ops: Uint8Array;
  /** Each parameter's kind, in order: null, number (the next of `numbers`), text or BLOB (the next span). */
  kinds: Uint8Array;
  numbers: Float64Array;
  /** Offset and byte length in `bytes` of each text (UTF-8) and BLOB parameter, in order. */
  spans: Float64Array;
  bytes: SharedArrayBuffer;
}

/** The main thread's reusable buffer for packed parameters: grows to the largest group seen. */
export class PackingArena {
  private shared = new SharedArrayBuffer(0);
  private view = Buffer.from(this.shared);

  /**
   * Packs statements (`ops`, and each one's parameters in `params`). `sizes` are the batch's
   * running counts: `chars` (UTF-16 units of all text, which is its UTF-8 size when it is ASCII)
   * and `blobBytes` size the buffer up front; text beyond ASCII grows it on the way if needed.
   */
  pack(ops: readonly number[], params: readonly (readonly Param[])[], sizes: { params: number; numbers: number; spans: number; chars: number; blobBytes: number }): PackedWrites {
    this.reserve(sizes.chars + sizes.blobBytes, 0);
    const kinds = new Uint8Array(sizes.params);
    const numbers = new Float64Array(sizes.numbers);
    const spans = new Float64Array(sizes.spans * 2);
    let at = 0;
    let p = 0;
    let n = 0;
    let s = 0;
    for (const list of params) {
      for (const param of list) {
        if (param === null) {
          kinds[p++] = Kind.Null;
        } else if (typeof param === 'number') {
          kinds[p++] = Kind.Number;
          numbers[n++] = param;
        } else if (typeof param === 'string') {
          // A string needs at most 3 bytes a unit; only when that might not fit is it measured.
          if (this.view.length - at < param.length * 3) this.reserve(at + Buffer.byteLength(param, 'utf8'), at);
          const written = this.view.write(param, at, 'utf8');
          kinds[p++] = Kind.Text;
          spans[s++] = at;
          spans[s++] = written;
          at += written;
        } else {
          if (this.view.length - at < param.length) this.reserve(at + param.length, at);
          this.view.set(param, at);
          kinds[p++] = Kind.Blob;
          spans[s++] = at;
          spans[s++] = param.length;
          at += param.length;
        }
      }
    }
    return { ops: Uint8Array.from(ops), kinds, numbers, spans, bytes: this.shared };
  }

  /** At least `size` bytes, keeping the first `keep` already written. */
  private reserve(size: number, keep: number): void {
    if (this.view.length >= size) return;
    const grown = new SharedArrayBuffer(Math.max(size, this.view.length * 2, 64 * 1024));
    const view = Buffer.from(grown);
    if (keep > 0) this.view.copy(view, 0, 0, keep);
    this.shared = grown;
    this.view = view;
  }
}

/** In the writer: the parameters in order, text decoded, BLOBs copied out of the shared buffer. */
export function unpackParams(packed: PackedWrites): Param[] {
  const { kinds, numbers, spans } = packed;
  const bytes = Buffer.from(packed.bytes);
  const params = new Array<Param>(kinds.length);
  let n = 0;
  let s = 0;
  for (let p = 0; p < kinds.length; p++) {
    switch (kinds[p]) {
      case Kind.Number:
        params[p] = numbers[n++]!;
        break;
      case Kind.Text: {
        const start = spans[s++]!;
        params[p] = bytes.toString('utf8', start, start + spans[s++]!);
        break;
      }
      case Kind.Blob: {
        const start = spans[s++]!;
        params[p] = Buffer.from(bytes.subarray(start, start + spans[s++]!));
        break;
      }
      default:
        params[p] = null;
    }
  }
  return params;
}
