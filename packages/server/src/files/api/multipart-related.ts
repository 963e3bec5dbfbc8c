import { Readable } from 'node:stream';
import { fileErrors, type StorageApi } from '../core/file-errors.js';

/**
 * `multipart/related` upload bodies (what firebase/storage's uploadBytes and the JSON API's
 * multipart uploads send): a JSON metadata part, then the media part, streamed out as it arrives
 * so a large file is never held whole. Only the metadata part is buffered, up to 64 KiB.
 */
export interface MultipartUpload {
  metadata: unknown;
  /** The media part's own Content-Type header, if any. */
  mediaContentType?: string;
  media: Readable;
}

const maxMetadataBytes = 64 * 1024;
const maxHeaderBytes = 8 * 1024;

export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/related\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

export async function readMultipartUpload(api: StorageApi, body: Readable, boundary: string): Promise<MultipartUpload> {
  const reader = new ChunkReader(body[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  const malformed = () => fileErrors.invalid(api, 'Malformed multipart body.');
  const opening = Buffer.from(`--${boundary}`);
  const separator = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may follow a preamble (RFC 2046); it must begin a line.
  const first = await reader.until(opening, maxHeaderBytes);
  if (first === undefined || (first.length > 0 && !first.subarray(first.length - 2).equals(Buffer.from('\r\n')))) throw malformed();
  if (!(await reader.skipLineEnd())) throw malformed();
  const metadataHeaders = await reader.until(Buffer.from('\r\n\r\n'), maxHeaderBytes, true);
  if (metadataHeaders === undefined) throw malformed();
  const metadataText = await reader.until(separator, maxMetadataBytes);
  if (metadataText === undefined) throw fileErrors.invalid(api, 'The metadata part is missing or larger than 64 KiB.');
  if (!(await reader.skipLineEnd())) throw malformed();
  const mediaHeaders = await reader.until(Buffer.from('\r\n\r\n'), maxHeaderBytes, true);
  if (mediaHeaders === undefined) throw malformed();
  let metadata: unknown;
  try {
    metadata = metadataText.length ? JSON.parse(metadataText.toString('utf8')) : {};
  } catch {
    throw fileErrors.invalid(api, 'The metadata part is not valid JSON.');
  }
  const mediaContentType = headerValue(mediaHeaders.toString('latin1'), 'content-type');
  return { metadata, ...(mediaContentType ? { mediaContentType } : {}), media: Readable.from(reader.streamUntil(separator, malformed)) };
}

function headerValue(block: string, name: string): string | undefined {
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) return line.slice(colon + 1).trim();
  }
  return undefined;
}

/** Reads a stream of chunks up to markers, keeping only what is not yet consumed. */
class ChunkReader {
  private buffered: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async more(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, next.value]) : next.value;
    return true;
  }

  /** The bytes before `marker` (consumed with it); undefined if it does not come within `limit` bytes. */
  async until(marker: Buffer, limit: number, allowEmptyStart = false): Promise<Buffer | undefined> {
    // Headers may be absent: the blank line then comes at once.
    if (allowEmptyStart && this.buffered.length >= 2 && this.buffered.subarray(0, 2).equals(Buffer.from('\r\n'))) {
      this.buffered = this.buffered.subarray(2);
      return Buffer.alloc(0);
    }
    for (;;) {
      const at = this.buffered.indexOf(marker);
      if (at >= 0 && at <= limit) {
        const before = this.buffered.subarray(0, at);
        this.buffered = this.buffered.subarray(at + marker.length);
        return before;
      }
      if (this.buffered.length > limit + marker.length) return undefined;
      if (!(await this.more())) return undefined;
      if (allowEmptyStart && this.buffered.length >= 2 && this.buffered.subarray(0, 2).equals(Buffer.from('\r\n'))) {
        this.buffered = this.buffered.subarray(2);
        return Buffer.alloc(0);
      }
    }
  }

  /** After a delimiter: CRLF (another part follows). */
  async skipLineEnd(): Promise<boolean> {
    while (this.buffered.length < 2) if (!(await this.more())) return false;
    if (this.buffered[0] !== 0x0d || this.buffered[1] !== 0x0a) return false;
    this.buffered = this.buffered.subarray(2);
    return true;
  }

  /** Yields the bytes before the closing delimiter as they come, holding back only what could be its start. */
  async *streamUntil(separator: Buffer, malformed: () => Error): AsyncGenerator<Buffer> {
    for (;;) {
      const at = this.buffered.indexOf(separator);
      if (at >= 0) {
        if (at > 0) yield this.buffered.subarray(0, at);
        this.buffered = this.buffered.subarray(at + separator.length);
        // The closing delimiter ends with `--`; a third part is not part of an upload.
        while (this.buffered.length < 2) if (!(await this.more())) throw malformed();
        if (this.buffered[0] !== 0x2d || this.buffered[1] !== 0x2d) throw malformed();
        // Drain the epilogue so the request completes.
        while (await this.more()) this.buffered = Buffer.alloc(0);
        return;
      }
      const keep = Math.min(this.buffered.length, separator.length - 1);
      if (this.buffered.length > keep) {
        const out = this.buffered.subarray(0, this.buffered.length - keep);
        this.buffered = Buffer.from(this.buffered.subarray(this.buffered.length - keep));
        yield out;
      }
      if (!(await this.more())) throw malformed();
    }
  }
}
