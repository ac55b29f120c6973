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
import { DEFAULT_MAX_ANSWER_BYTES } from '../types';

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

/**
 * Bytes appended in pieces, kept in one buffer that grows by doubling: n bytes cost O(n) copying
 * and one object however they were split (concatenating on every read was quadratic, and a view
 * per chunk let a device make millions of objects with 1-byte chunks).
 */
class ByteQueue {
  private store = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  append(data: Buffer): void {
    if (data.length === 0) return;
    if (this.end + data.length > this.store.length) {
      const need = this.length + data.length;
      const next = need * 2 <= this.store.length ? this.store : Buffer.allocUnsafe(Math.max(need, this.store.length * 2, 4096));
      this.store.copy(next, 0, this.start, this.end);
      this.store = next;
      this.end = this.length;
      this.start = 0;
    }
    data.copy(this.store, this.end);
    this.end += data.length;
  }

  /** The queued bytes (valid until the next append). */
  view(): Buffer {
    return this.store.subarray(this.start, this.end);
  }

  /** Drops the first n bytes; a large buffer is let go once empty. */
  consume(n: number): void {
    this.start += n;
    if (this.start < this.end) return;
    this.start = this.end = 0;
    if (this.store.length > 1024 * 1024) this.store = Buffer.alloc(0);
  }
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
  private input = new ByteQueue();
  /** EOM mode: bytes of `input` already known to hold no delimiter start. */
  private scanned = 0;
  /** EOM mode: leading bytes of `input` already known to be whitespace. */
  private blanks = 0;
  private state: ChunkState = { at: 'lf' };
  /** Chunked mode: the data of the message's chunks so far. */
  private body = new ByteQueue();

  constructor(
    framing: Framing = 'eom',
    private readonly maxMessageBytes = DEFAULT_MAX_ANSWER_BYTES,
  ) {
    this.framing = framing;
  }

  get mode(): Framing {
    return this.framing;
  }

  /** Switch framing for everything not yet decoded (after the hello exchange). */
  setFraming(framing: Framing): void {
    if (framing === this.framing) return;
    if (this.body.length > 0 || this.state.at !== 'lf') {
      throw new FramingError('cannot change framing in the middle of a message');
    }
    this.framing = framing;
    this.scanned = 0;
    this.blanks = 0;
  }

  /** Bytes received but not yet part of a complete message. */
  get pendingBytes(): number {
    return this.input.length + this.body.length;
  }

  /** Append received bytes; take complete messages out with next(). */
  push(data: Buffer): void {
    this.input.append(data);
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
    const buf = this.input.view();
    // Every NETCONF message is XML: anything else before the delimiter is not NETCONF at all.
    // Whitespace already seen is not scanned again: a device sending only blanks costs linear time.
    let first = this.blanks;
    while (first < buf.length && (buf[first] === 0x20 || buf[first] === 0x0a || buf[first] === 0x0d || buf[first] === 0x09)) first++;
    this.blanks = first;
    if (first < buf.length && buf[first] !== 0x3c) {
      const near = JSON.stringify(buf.subarray(first, first + 24).toString('latin1'));
      throw new FramingError(`expected an XML message, got ${near}`);
    }
    const idx = buf.indexOf(EOM_BYTES, Math.max(0, this.scanned));
    if (idx < 0) {
      this.scanned = Math.max(0, buf.length - (EOM_BYTES.length - 1));
      if (buf.length > this.maxMessageBytes) {
        throw new FramingError(`message exceeds ${this.maxMessageBytes} bytes without an end-of-message marker`);
      }
      return undefined;
    }
    const msg = buf.subarray(0, idx).toString('utf8');
    this.input.consume(idx + EOM_BYTES.length);
    this.scanned = 0;
    this.blanks = 0;
    return msg;
  }

  private nextChunked(): string | undefined {
    let i = 0;
    const b = this.input.view();
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
            if (this.body.length === 0) fail('end-of-chunks marker before any chunk');
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
            if (this.body.length + size > this.maxMessageBytes) fail(`message exceeds ${this.maxMessageBytes} bytes`);
            i++;
            this.state = { at: 'data', remaining: size };
          } else {
            fail('expected digit or LF in chunk size');
          }
          break;
        }
        case 'data': {
          const take = Math.min(s.remaining, b.length - i);
          this.body.append(b.subarray(i, i + take));
          i += take;
          s.remaining -= take;
          if (s.remaining === 0) this.state = { at: 'lf' };
          break;
        }
        case 'end-lf': {
          if (b[i] !== LF) fail('expected LF after end-of-chunks marker');
          i++;
          this.state = { at: 'lf' };
          const msg = this.body.view().toString('utf8');
          this.body.consume(this.body.length);
          this.input.consume(i);
          return msg;
        }
      }
    }
    // Everything consumed without finishing a message: chunk data already went to `body`.
    this.input.consume(b.length);
    return undefined;
  }
}
