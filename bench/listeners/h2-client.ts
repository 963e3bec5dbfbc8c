/**
 * The listener bench's HTTP/2 client: many gRPC streams on one connection, their DATA frames read
 * straight off the socket. Node's http2 client costs several µs per stream and message (nghttp2, a
 * Readable per stream, a 'data' event each); with 1,000 listeners in three processes on a 2-core
 * machine that the server shares, those were the clients' 7 ms of CPU per commit, taken from the
 * server's cores, and most of the spread between a commit's first and last listener. Every listener
 * still has its own stream and reads each of its messages; only the framework around them is gone.
 *
 * Only what the bench needs: requests whose headers are HPACK literals without indexing (no
 * dynamic table on our side); the server's header blocks are skipped, never decoded (the bench reads
 * no response header, so the server's HPACK table does not matter); flow-control windows opened
 * to the maximum and topped up; SETTINGS and PING answered; RST_STREAM, GOAWAY, trailers (HEADERS
 * with END_STREAM) and the socket's end reported to the stream's handler.
 */
import { connect, type Socket } from 'node:net';

export interface StreamHandler {
  /** A DATA frame's payload (a view into the socket's bytes, valid during the call); `at`: when it was read. */
  data(payload: Buffer, at: number): void;
  /** The stream ended or failed: why. */
  closed(reason: string): void;
}

const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const maxWindow = 2 ** 31 - 1;
const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  payload.copy(out, 9);
  return out;
}

function windowUpdate(stream: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(WINDOW_UPDATE, 0, stream, payload);
}

/** An HPACK integer with a 7-bit prefix (RFC 7541 5.1), as string lengths are, never Huffman-coded. */
function hpackLength(length: number): number[] {
  if (length < 127) return [length];
  const bytes = [127];
  let rest = length - 127;
  while (rest >= 128) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>= 7;
  }
  bytes.push(rest);
  return bytes;
}

/** A header block of literals without indexing, new names (RFC 7541 6.2.2). */
function headerBlock(headers: Array<[string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0x00, ...hpackLength(n.length)]), n, Buffer.from(hpackLength(v.length)), v);
  }
  return Buffer.concat(parts);
}

export class H2Connection {
  private readonly streams = new Map<number, StreamHandler>();
  private nextStream = 1;
  private buffered: Buffer = Buffer.alloc(0);
  /** DATA bytes read since the connection's window was last topped up. */
  private unacknowledged = 0;
  private closing = false;
  private ended: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    private readonly authority: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.ended = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => this.closeAll(this.closing ? 'closed by the client' : 'the connection closed'));
    socket.on('error', (error) => this.closeAll(`connection error: ${error.message}`));
    // Our settings: no push, each stream's window at the maximum; then the connection's.
    const settings = Buffer.alloc(12);
    settings.writeUInt16BE(0x2, 0);
    settings.writeUInt32BE(0, 2);
    settings.writeUInt16BE(0x4, 6);
    settings.writeUInt32BE(maxWindow, 8);
    socket.write(Buffer.concat([preface, frame(SETTINGS, 0, 0, settings), windowUpdate(0, maxWindow - 65_535)]));
  }

  /** Connects to `origin` (http://host:port). */
  static open(origin: string): Promise<H2Connection> {
    const url = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
        socket.off('error', reject);
        resolve(new H2Connection(socket, url.host));
      });
      socket.once('error', reject);
    });
  }

  /** A POST of `path` with `headers` and a first DATA frame of `body`, the stream left open. */
  request(path: string, headers: Array<[string, string]>, body: Buffer, handler: StreamHandler): number {
    const id = this.nextStream;
    this.nextStream += 2;
    this.streams.set(id, handler);
    const block = headerBlock([[':method', 'POST'], [':scheme', 'http'], [':path', path], [':authority', this.authority], ...headers]);
    this.socket.write(Buffer.concat([frame(HEADERS, END_HEADERS, id, block), frame(DATA, 0, id, body)]));
    return id;
  }

  /** GOAWAY, then the socket closed; resolves once it is. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      const payload = Buffer.alloc(8);
      // The server keeps its side open while it holds streams: close ours once the GOAWAY is out.
      this.socket.end(frame(GOAWAY, 0, 0, payload), () => this.socket.destroy());
    }
    return this.ended;
  }

  private closeAll(reason: string): void {
    const handlers = [...this.streams.values()];
    this.streams.clear();
    for (const handler of handlers) handler.closed(reason);
  }

  private read(chunk: Buffer): void {
    const at = performance.timeOrigin + performance.now();
    let bytes = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    let offset = 0;
    while (bytes.length - offset >= 9) {
      const length = bytes.readUIntBE(offset, 3);
      if (bytes.length - offset < 9 + length) break;
      const type = bytes[offset + 3]!;
      const flags = bytes[offset + 4]!;
      const stream = bytes.readUInt32BE(offset + 5) & 0x7fffffff;
      const payload = bytes.subarray(offset + 9, offset + 9 + length);
      offset += 9 + length;
      this.onFrame(type, flags, stream, payload, at);
    }
    // A partial frame is kept (copied: the socket's chunk is not ours to hold).
    this.buffered = offset === bytes.length ? Buffer.alloc(0) : Buffer.from(bytes.subarray(offset));
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer, at: number): void {
    switch (type) {
      case DATA: {
        this.unacknowledged += payload.length;
        if (this.unacknowledged > 2 ** 30) {
          this.socket.write(windowUpdate(0, this.unacknowledged));
          this.unacknowledged = 0;
        }
        const handler = this.streams.get(stream);
        if (!handler) return;
        const data = flags & PADDED ? payload.subarray(1, payload.length - payload[0]!) : payload;
        if (data.length) handler.data(data, at);
        if (flags & END_STREAM) this.end(stream, 'the server ended the stream');
        return;
      }
      case HEADERS:
        // Response headers, or trailers when they end the stream (a gRPC status the bench does not expect).
        if (flags & END_STREAM) this.end(stream, 'the server ended the stream (trailers)');
        return;
      case RST_STREAM:
        this.end(stream, `the server reset the stream (code ${payload.readUInt32BE(0)})`);
        return;
      case SETTINGS:
        if (!(flags & ACK)) this.socket.write(frame(SETTINGS, ACK, 0));
        return;
      case PING:
        if (!(flags & ACK)) this.socket.write(frame(PING, ACK, 0, Buffer.from(payload)));
        return;
      case GOAWAY:
        this.closeAll(`the server sent GOAWAY (code ${payload.readUInt32BE(4)})`);
        return;
      default:
        // WINDOW_UPDATE (nothing the bench sends needs it), PRIORITY, CONTINUATION of skipped headers.
        return;
    }
  }

  private end(stream: number, reason: string): void {
    const handler = this.streams.get(stream);
    this.streams.delete(stream);
    handler?.closed(reason);
  }
}
