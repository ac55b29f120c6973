import type { FastifyInstance } from 'fastify';

/** Bytes of a refused body read and thrown away after its 413 at the most; a client still sending then is cut off. */
export const LINGER_BYTES = 64 * 1024 * 1024;
/** How long a refused body may keep coming after its 413. */
export const LINGER_MS = 10_000;
/**
 * How often a lingering connection is looked at (Node's parser reads the body without events), so
 * the bound is loose: a client on a fast link gets some MiB past LINGER_BYTES in before the next look.
 */
const LINGER_CHECK_MS = 50;

/**
 * A body refused before it was all read (its Content-Length over the endpoint's limit, or its
 * bytes once they passed it) is answered 413 while the client is still sending it. Fastify marks
 * that answer `Connection: close` and Node then closes the connection at once: the client's next
 * bytes make the kernel answer with a reset, which can destroy the 413 before the client has read
 * it, so curl and fetch report a broken pipe instead of the answer saying what the limit is.
 * Instead the connection lingers: Node reads the rest of the body and throws it away, up to
 * LINGER_BYTES or LINGER_MS, then the connection serves the next request like any other; past
 * either bound it is cut off.
 */
export async function lingeringClosePlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request, reply) => {
    if (reply.statusCode === 413 && !request.raw.complete && reply.getHeader('connection') === 'close') reply.removeHeader('connection');
  });
  app.addHook('onResponse', async (request, reply) => {
    const { raw } = request;
    const socket = raw.socket;
    if (reply.statusCode !== 413 || raw.complete || socket.destroyed) return;
    const from = socket.bytesRead;
    const until = Date.now() + LINGER_MS;
    const check = setInterval(() => {
      if (raw.complete || socket.destroyed) return clearInterval(check);
      if (socket.bytesRead - from <= LINGER_BYTES && Date.now() < until) return;
      clearInterval(check);
      socket.destroy();
    }, LINGER_CHECK_MS).unref();
    // A body the parser stopped reading past the limit is read on (one nobody read, Node reads itself).
    raw.unpipe();
    raw.resume();
  });
}
