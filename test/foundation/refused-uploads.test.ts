/**
 * A body over its endpoint's limit is answered 413 while the client is still sending it. The
 * connection lingers (controller/src/plugins/lingering-close.ts): the rest of the body is read and
 * thrown away, so the client can finish sending and read the answer, instead of a reset that
 * destroyed the answer unread (curl and fetch reported a broken pipe). Up to a bound: a client
 * sending on and on is cut off. Raw TCP sockets, so every byte both ways is seen.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_BYTES } from '../../controller/src/plugins/lingering-close';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => {
  await c?.close();
});

const MiB = 1024 * 1024;
/** A JSON string body of `bytes` bytes: what the login endpoint (1 MiB limit) refuses when over it. */
const chunkOf = (bytes: number) => Buffer.alloc(bytes, 'a');

interface Upload {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves once what was received contains `text`. */
  until(text: string): Promise<void>;
  /**
   * Writes `total` bytes in 256 KiB chunks as fast as the socket takes them, those past `paceAfter`
   * 20 ms apart; resolves with the bytes written, or the error that stopped it.
   */
  send(total: number, paceAfter?: number): Promise<{ written: number; error: string | null }>;
  closed: Promise<void>;
}

function upload(headers: string): Upload {
  const { hostname, port } = new URL(c.url);
  const socket = connect(Number(port), hostname);
  let received = '';
  let wake: (() => void) | undefined;
  let error: string | null = null;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    wake?.();
  });
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(headers);
  return {
    socket,
    closed,
    received: () => received,
    async until(text) {
      while (!received.includes(text)) {
        if (socket.destroyed) throw new Error(`the connection closed (${error ?? 'no error'}) before ${text} came: ${received.slice(0, 300)}`);
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), closed]);
      }
    },
    async send(total, paceAfter = total) {
      const chunk = chunkOf(256 * 1024);
      let written = 0;
      while (written < total && error === null && !socket.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, total - written));
        if (!socket.write(part)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
        if (written >= paceAfter) await new Promise((r) => setTimeout(r, 20));
        written += part.length;
      }
      return { written, error };
    },
  };
}

const post = (framing: string) => `POST /api/auth/login HTTP/1.1\r\nHost: switchboard\r\nContent-Type: application/json\r\n${framing}\r\n`;

/** The first answer's status and JSON body in `bytes`. */
function firstAnswer(bytes: string): { status: number; body: Record<string, unknown> } {
  const status = Number(bytes.slice(9, 12));
  const start = bytes.indexOf('\r\n\r\n') + 4;
  const length = Number(/content-length: (\d+)/i.exec(bytes.slice(0, start))?.[1]);
  return { status, body: JSON.parse(bytes.slice(start, start + length)) as Record<string, unknown> };
}

describe('a body over the limit', () => {
  it('by its Content-Length is answered 413 while the client sends all of it, and the connection serves the next request', async () => {
    const total = 8 * MiB;
    const u = upload(post(`Content-Length: ${total}\r\n`));
    const sent = await u.send(total);
    expect(sent).toEqual({ written: total, error: null });
    await u.until('"code":"BODY_TOO_LARGE"');
    expect(firstAnswer(u.received())).toEqual({
      status: 413,
      body: { error: 'Request body is over the 1 MiB limit of this endpoint', code: 'BODY_TOO_LARGE', max_bytes: MiB },
    });
    // The whole body was read: the next request on the connection is answered.
    u.socket.write('GET /healthz HTTP/1.1\r\nHost: switchboard\r\n\r\n');
    await u.until('HTTP/1.1 200');
    u.socket.destroy();
  });

  it('in a chunked body is answered 413 once past the limit, and the client can send the rest', async () => {
    const u = upload(post('Transfer-Encoding: chunked\r\n'));
    const size = 512 * 1024;
    const piece = `${size.toString(16)}\r\n${'a'.repeat(size)}\r\n`;
    let error: string | null = null;
    u.socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    for (let i = 0; i < 12 && error === null; i++) {
      if (!u.socket.write(piece)) await new Promise((r) => u.socket.once('drain', r));
    }
    u.socket.write('0\r\n\r\n');
    await u.until('"code":"BODY_TOO_LARGE"');
    expect(error).toBeNull();
    expect(firstAnswer(u.received()).status).toBe(413);
    u.socket.write('GET /healthz HTTP/1.1\r\nHost: switchboard\r\n\r\n');
    await u.until('HTTP/1.1 200');
    u.socket.destroy();
  });

  it(`is read after its 413 only up to ${LINGER_BYTES / MiB} MiB: a client sending on is cut off`, async () => {
    const total = LINGER_BYTES + 64 * MiB;
    const u = upload(post(`Content-Length: ${total}\r\n`));
    // The server looks at the bytes read every 50 ms, and over loopback all 128 MiB can come in
    // before it looks once: past the bound the client sends on at a pace, as a real one would.
    const sent = await u.send(total, LINGER_BYTES);
    await u.closed;
    expect(sent.written).toBeLessThan(total);
    expect(firstAnswer(u.received()).status).toBe(413);
  }, 60_000);
});

describe('Expect: 100-continue', () => {
  const expecting = (path: string, length: number) =>
    `POST ${path} HTTP/1.1\r\nHost: switchboard\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

  it('over the limit is answered 413 before the body is sent, with no 100: the client never uploads it', async () => {
    const u = upload(expecting('/api/auth/login', 8 * MiB));
    await u.closed; // Node closes the connection: the body held back cannot follow on it
    expect(u.received()).not.toContain('100 Continue');
    expect(firstAnswer(u.received())).toMatchObject({ status: 413, body: { code: 'BODY_TOO_LARGE', max_bytes: MiB } });
  });

  it('by a caller the route guard refuses is answered 401 with no 100', async () => {
    const u = upload(expecting('/api/devices', 1024));
    await u.closed;
    expect(u.received()).not.toContain('100 Continue');
    expect(firstAnswer(u.received()).status).toBe(401);
  });

  it('within the limit of a route the caller may use gets its 100, then the answer to the body it sent', async () => {
    const body = JSON.stringify({ username: 'nobody', password: 'not-the-password' });
    const u = upload(expecting('/api/auth/login', Buffer.byteLength(body)));
    await u.until('HTTP/1.1 100 Continue\r\n\r\n');
    expect(u.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    u.socket.write(body);
    await u.until('"code"');
    const answer = u.received().slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
    expect(firstAnswer(answer).status).toBe(401);
    u.socket.destroy();
  });
});
