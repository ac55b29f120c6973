/**
 * NETCONF-over-SSH message framing (RFC 6242).
 *
 * - base:1.0 "end-of-message": every message is followed by `]]>]]>`.
 * - base:1.1 "chunked": a message is one or more chunks `\n#<size>\n<size octets>` closed by
 *   `\n##\n`. Sizes count octets, so the decoder works on bytes and only turns a message into a
 *   string once all of it has arrived (a UTF-8 character may straddle two reads or two chunks).
 *
 * The decoder accepts input split at any byte boundary and any number of messages per read.
 */

export type Framing = 'eom' | 'chunked';

export const EOM = ']]>]]>';
const EOM_BYTES = Buffer.from(EOM);
/** RFC 6242 §4.2: chunk-size is 1..4294967295. */
const MAX_CHUNK_SIZE = 4294967295;
const MAX_CHUNK_DIGITS = 10;
const LF = 0x0a;
const HASH = 0x23;

export class FramingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FramingError';
  }
}

export function encodeMessage(xml: string, framing: Framing): Buffer {
  const body = Buffer.from(xml, 'utf8');
  if (framing === 'eom') return Buffer.concat([body, EOM_BYTES]);
  return Buffer.concat([Buffer.from(`\n#${body.length}\n`), body, Buffer.from('\n##\n')]);
}

type ChunkState =
  | { at: 'lf' } // expecting the LF that starts a chunk header or the end-of-chunks marker
  | { at: 'hash' } // expecting '#'
  | { at: 'size-or-end' } // expecting the first size digit or a second '#'
  | { at: 'size'; digits: string }
  | { at: 'data'; remaining: number }
  | { at: 'end-lf' }; // after "\n##", expecting the final LF

export class FrameDecoder {
  private framing: Framing;
  private buf: Buffer = Buffer.alloc(0);
  /** EOM mode: bytes of `buf` already known to hold no delimiter start. */
  private scanned = 0;
  private state: ChunkState = { at: 'lf' };
  private parts: Buffer[] = [];
  private partsBytes = 0;

  constructor(
    framing: Framing = 'eom',
    private readonly maxMessageBytes = 256 * 1024 * 1024,
  ) {
    this.framing = framing;
  }

  get mode(): Framing {
    return this.framing;
  }

  /** Switch framing for everything not yet decoded (after the hello exchange). */
  setFraming(framing: Framing): void {
    if (framing === this.framing) return;
    if (this.parts.length > 0 || this.state.at !== 'lf') {
      throw new FramingError('cannot change framing in the middle of a message');
    }
    this.framing = framing;
    this.scanned = 0;
  }

  /** Bytes received but not yet part of a complete message. */
  get pendingBytes(): number {
    return this.buf.length + this.partsBytes;
  }

  /** Append received bytes; take complete messages out with next(). */
  push(data: Buffer): void {
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
  }

  /**
   * The next complete message, or undefined when more bytes are needed. Messages come out one
   * at a time so the caller can switch framing right after the hello, before the bytes that
   * follow it are decoded.
   */
  next(): string | undefined {
    return this.framing === 'eom' ? this.nextEom() : this.nextChunked();
  }

  /** Feed bytes and return every message completed by them (no framing switch in between). */
  pushAll(data: Buffer): string[] {
    this.push(data);
    const out: string[] = [];
    for (let m = this.next(); m !== undefined; m = this.next()) out.push(m);
    return out;
  }

  private nextEom(): string | undefined {
    // Every NETCONF message is XML: anything else before the delimiter is not NETCONF at all.
    let first = 0;
    while (first < this.buf.length && (this.buf[first] === 0x20 || this.buf[first] === 0x0a || this.buf[first] === 0x0d || this.buf[first] === 0x09))
      first++;
    if (first < this.buf.length && this.buf[first] !== 0x3c) {
      const near = JSON.stringify(this.buf.subarray(first, first + 24).toString('latin1'));
      throw new FramingError(`expected an XML message, got ${near}`);
    }
    const idx = this.buf.indexOf(EOM_BYTES, Math.max(0, this.scanned));
    if (idx < 0) {
      this.scanned = Math.max(0, this.buf.length - (EOM_BYTES.length - 1));
      if (this.buf.length > this.maxMessageBytes) {
        throw new FramingError(`message exceeds ${this.maxMessageBytes} bytes without an end-of-message marker`);
      }
      return undefined;
    }
    const msg = this.buf.subarray(0, idx).toString('utf8');
    this.buf = this.buf.subarray(idx + EOM_BYTES.length);
    this.scanned = 0;
    return msg;
  }

  private nextChunked(): string | undefined {
    let i = 0;
    const b = this.buf;
    const fail = (what: string): never => {
      const near = JSON.stringify(b.subarray(Math.max(0, i - 8), i + 16).toString('latin1'));
      throw new FramingError(`bad chunked framing: ${what} near ${near}`);
    };
    while (i < b.length) {
      const s = this.state;
      switch (s.at) {
        case 'lf':
          if (b[i] !== LF) fail('expected LF before chunk header');
          i++;
          this.state = { at: 'hash' };
          break;
        case 'hash':
          if (b[i] !== HASH) fail("expected '#' in chunk header");
          i++;
          this.state = { at: 'size-or-end' };
          break;
        case 'size-or-end': {
          const c = b[i];
          if (c === HASH) {
            if (this.parts.length === 0) fail('end-of-chunks marker before any chunk');
            i++;
            this.state = { at: 'end-lf' };
          } else if (c >= 0x31 && c <= 0x39) {
            i++;
            this.state = { at: 'size', digits: String.fromCharCode(c) };
          } else {
            fail('expected chunk size (1-9) or end-of-chunks');
          }
          break;
        }
        case 'size': {
          const c = b[i];
          if (c >= 0x30 && c <= 0x39) {
            if (s.digits.length >= MAX_CHUNK_DIGITS) fail('chunk size too long');
            s.digits += String.fromCharCode(c);
            i++;
          } else if (c === LF) {
            const size = Number(s.digits);
            if (size > MAX_CHUNK_SIZE) fail(`chunk size ${size} exceeds ${MAX_CHUNK_SIZE}`);
            if (this.partsBytes + size > this.maxMessageBytes) fail(`message exceeds ${this.maxMessageBytes} bytes`);
            i++;
            this.state = { at: 'data', remaining: size };
          } else {
            fail('expected digit or LF in chunk size');
          }
          break;
        }
        case 'data': {
          const take = Math.min(s.remaining, b.length - i);
          this.parts.push(b.subarray(i, i + take));
          this.partsBytes += take;
          i += take;
          s.remaining -= take;
          if (s.remaining === 0) this.state = { at: 'lf' };
          break;
        }
        case 'end-lf': {
          if (b[i] !== LF) fail('expected LF after end-of-chunks marker');
          i++;
          this.state = { at: 'lf' };
          const msg = Buffer.concat(this.parts, this.partsBytes).toString('utf8');
          this.parts = [];
          this.partsBytes = 0;
          this.buf = b.subarray(i);
          return msg;
        }
      }
    }
    // Everything consumed without finishing a message. Chunk data already went to `parts`
    // (as views into the old buffer), so nothing needs to be kept in `buf`.
    this.buf = Buffer.alloc(0);
    return undefined;
  }
}
