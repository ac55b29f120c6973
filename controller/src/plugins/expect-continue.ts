import type { FastifyInstance } from 'fastify';

const EXPECTS_CONTINUE = /(^|,)\s*100-continue\s*(,|$)/i;

/**
 * `Expect: 100-continue`: the client sends the headers and waits for a 100 before it sends the
 * body. Node answers 100 to every such request at once, before anything is known about it, so a
 * client was told to go on with an upload that was then refused (an anonymous caller, a route that
 * does not exist, a body over the limit) and sent all of it for nothing. Here the 100 goes only
 * once the request has passed routing and the route guard (onRequest) and its Content-Length fits
 * the endpoint's limit; otherwise the final answer (401, 403, 404, 413) goes instead, and Node
 * closes the connection after it (the body the client held back can no longer follow).
 */
export async function expectContinuePlugin(app: FastifyInstance): Promise<void> {
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  app.addHook('preParsing', async (request, reply, payload) => {
    const { headers } = request.raw;
    if (!EXPECTS_CONTINUE.test(headers.expect ?? '')) return payload;
    const length = Number(headers['content-length']);
    // Over the limit, the body parser answers 413 without reading any of it.
    if (!(length > request.routeOptions.bodyLimit)) reply.raw.writeContinue();
    return payload;
  });
}
