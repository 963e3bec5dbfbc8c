import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';

/**
 * The LevelDB log format, in which Firestore exports (managed, gcloud's emulator, the Firebase CLI)
 * keep their records: 32 KiB blocks of records, each with a 7-byte header (masked CRC-32C of its
 * type byte and data, length, type). A record longer than the rest of a block is cut into FIRST,
 * MIDDLE and LAST fragments; a block's last 1-6 bytes, too few for a header, are zeros.
 * https://github.com/google/leveldb/blob/main/doc/log_format.md
 *
 * Reading is synchronous and a block at a time, so an export of any size is read in flat memory.
 */

export const blockSize = 32 * 1024;
const headerSize = 7;
const full = 1;
const first = 2;
const middle = 3;
const last = 4;

/** A log file that is not well formed: a checksum, length or fragment order that does not fit. */
export class CorruptLog extends Error {
  constructor(file: string, offset: number, why: string) {
    super(`${file}: ${why} at byte ${offset}`);
    this.name = 'CorruptLog';
  }
}

function mask(crc: number): number {
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

function recordChecksum(type: number, data: Buffer): number {
  return mask(crc32c(data, crc32c(Buffer.of(type))));
}

/** Every record of a log file, in order. */
export function* readLogRecords(file: string): Generator<Buffer> {
  const fd = openSync(file, 'r');
  const block = Buffer.alloc(blockSize);
  let blockStart = 0;
  let fragments: Buffer[] | undefined;
  try {
    for (;;) {
      const size = readSync(fd, block, 0, blockSize, blockStart);
      if (size === 0) break;
      let at = 0;
      while (at + headerSize <= size) {
        const checksum = block.readUInt32LE(at);
        const length = block.readUInt16LE(at + 4);
        const type = block[at + 6]!;
        // A zero header is the padding a writer may leave at a block's end (or a preallocated tail).
        if (type === 0 && length === 0 && checksum === 0) break;
        const offset = blockStart + at;
        if (at + headerSize + length > size) throw new CorruptLog(file, offset, 'a record runs past its block');
        const data = Buffer.from(block.subarray(at + headerSize, at + headerSize + length));
        if (recordChecksum(type, data) !== checksum) throw new CorruptLog(file, offset, 'a record checksum does not match');
        at += headerSize + length;
        if (type === full) {
          if (fragments) throw new CorruptLog(file, offset, 'a whole record inside a fragmented one');
          yield data;
        } else if (type === first) {
          if (fragments) throw new CorruptLog(file, offset, 'a record starts inside another');
          fragments = [data];
        } else if (type === middle || type === last) {
          if (!fragments) throw new CorruptLog(file, offset, 'a record fragment without its start');
          fragments.push(data);
          if (type === last) {
            yield Buffer.concat(fragments);
            fragments = undefined;
          }
        } else throw new CorruptLog(file, offset, `unknown record type ${type}`);
      }
      if (size < blockSize) break;
      blockStart += blockSize;
    }
    if (fragments) throw new CorruptLog(file, blockStart, 'the file ends inside a record');
  } finally {
    closeSync(fd);
  }
}

/** Writes records to a new log file; `close` flushes and syncs it. */
export class LogWriter {
  private readonly fd: number;
  /** Bytes used in the current block. */
  private inBlock = 0;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes written, the pending ones included. */
  size = 0;

  constructor(file: string) {
    this.fd = openSync(file, 'wx', 0o600);
  }

  add(record: Buffer): void {
    let at = 0;
    let begun = false;
    for (;;) {
      const room = blockSize - this.inBlock;
      if (room < headerSize) {
        if (room > 0) this.push(Buffer.alloc(room));
        this.inBlock = 0;
        continue;
      }
      const length = Math.min(record.length - at, room - headerSize);
      const end = at + length === record.length;
      const type = !begun ? (end ? full : first) : end ? last : middle;
      const data = record.subarray(at, at + length);
      const header = Buffer.alloc(headerSize);
      header.writeUInt32LE(recordChecksum(type, data), 0);
      header.writeUInt16LE(length, 4);
      header[6] = type;
      this.push(header);
      this.push(data);
      this.inBlock += headerSize + length;
      at += length;
      begun = true;
      if (end) return;
    }
  }

  close(): void {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }

  private push(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.size += bytes.length;
    if (this.pendingBytes >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.fd, Buffer.concat(this.pending));
    this.pending.length = 0;
    this.pendingBytes = 0;
  }
}
