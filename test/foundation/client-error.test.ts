/**
 * What Node's HTTP parser refuses (bytes that are not HTTP, headers over the limit) is answered on
 * the socket by clientErrorHandler (controller/src/plugins/error-handler.ts), never while an
 * answer to an earlier request of the same connection is open: written then, the refusal would be
 * read as that answer, or land inside it. Raw TCP sockets, so every byte the server sends is seen.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorHandler, errorHandlerPlugin } from '../../controller/src/plugins/error-handler';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => {
  await c?.close();
});

/** A raw connection to `url`: everything it received so far, a wait for more, and everything once closed. */
function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let received = '';
  let wake: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    wake?.();
  });
  // The server may close with a reset after its answer: what came before counts.
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  return {
    socket,
    closed,
    /** Resolves once what was received passes `done`. */
    async until(done: (received: string) => boolean): Promise<void> {
      while (!done(received)) await new Promise<void>((resolve) => (wake = resolve));
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP/1.1 answers in `bytes`, in order (Content-Length or chunked bodies); throws on anything else. */
function answers(bytes: string): Answer[] {
  const out: Answer[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0 || !rest.startsWith('HTTP/1.1 ')) throw new Error(`not an HTTP answer: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    rest = rest.slice(end + 4);
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const sizeEnd = rest.indexOf('\r\n');
        const size = Number.parseInt(rest.slice(0, sizeEnd), 16);
        if (sizeEnd < 0 || !Number.isInteger(size) || rest.length < sizeEnd + 2 + size + 2) {
          throw new Error(`a chunked body cut or garbled: ${JSON.stringify(rest.slice(0, 200))}`);
        }
        body += rest.slice(sizeEnd + 2, sizeEnd + 2 + size);
        rest = rest.slice(sizeEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) throw new Error(`a body cut short: ${JSON.stringify(rest)}`);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
  return out;
}

const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';

describe("the parser's refusals on a connection that already has requests", () => {
  it('bytes that are not HTTP pipelined behind a valid request: that request gets its own answer, then the connection closes', async () => {
    // One packet: Node parses the valid request, then refuses the rest while /healthz is being answered.
    const connection = rawConnection(c.url);
    connection.socket.write(`${HEALTHZ}NOT HTTP AT ALL\r\n\r\n`);
    const received = await connection.closed;
    const [only, ...more] = answers(received);
    expect(only.status, received).toBe(200);
    expect(JSON.parse(only.body)).toMatchObject({ status: 'ok' });
    expect(more).toEqual([]);
    expect(received).not.toContain('MALFORMED_REQUEST');
  });

  it('once every answer is finished, a refusal is the next answer on the kept-alive connection (431 after a 200)', async () => {
    const connection = rawConnection(c.url);
    connection.socket.write(HEALTHZ);
    await connection.until((received) => received.endsWith('}'));
    connection.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    const [first, second, ...more] = answers(await connection.closed);
    expect(first.status).toBe(200);
    expect(second.status).toBe(431);
    expect(JSON.parse(second.body)).toEqual({ error: 'Request line and headers are too large', code: 'HEADERS_TOO_LARGE' });
    expect(more).toEqual([]);
  });
});

describe('a refusal while an answer is being sent', () => {
  let app: FastifyInstance;
  let url: string;
  let body: PassThrough;

  beforeAll(async () => {
    // The controller has no route that streams an answer, so a server of this test, with the
    // controller's handlers, sends one whose first part goes out before the refused bytes come.
    app = Fastify({ clientErrorHandler });
    await errorHandlerPlugin(app);
    app.get('/stream', (_request, reply) => {
      body = new PassThrough();
      body.write('first part;');
      return reply.type('text/plain').send(body);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lets the answer finish whole, writes nothing into it, then closes', async () => {
    const connection = rawConnection(url);
    connection.socket.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    await connection.until((received) => received.includes('first part;'));
    const refused = new Promise<void>((resolve) => app.server.once('clientError', () => resolve()));
    connection.socket.write('NOT HTTP AT ALL\r\n\r\n');
    await refused;
    body.end('second part');
    const received = await connection.closed;
    const [only, ...more] = answers(received);
    expect(only).toMatchObject({ status: 200, body: 'first part;second part' });
    expect(more).toEqual([]);
    expect(received).not.toContain('MALFORMED_REQUEST');
  });
});
