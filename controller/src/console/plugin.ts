import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_HEADERS, isServerPath } from './headers';

/** Where `npm run console:build` (run by `npm ci` through the prepare script) puts the console. */
export const CONSOLE_DIST = join(import.meta.dirname, '../../console/dist');

const YEAR_MS = 365 * 24 * 3600 * 1000;
const NOT_BUILT = 'The operator console is not built. Run `npm run console:build` (npm ci does it), then restart.';

/**
 * The operator console at /: hashed files under /assets/ cached for a year, anything else that is
 * not an API path gets index.html (client-side routes), never cached so a new build shows at once.
 */
export async function consolePlugin(app: FastifyInstance, options: { dist?: string } = {}): Promise<void> {
  const dist = options.dist ?? CONSOLE_DIST;
  await app.register(fastifyStatic, { root: dist, serve: false, index: false });
  const sendIndex = (reply: FastifyReply) => {
    if (!existsSync(join(dist, 'index.html'))) return reply.code(503).type('text/plain; charset=utf-8').send(NOT_BUILT);
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };

  app.get(
    '/*',
    {
      config: { public: true },
      schema: { hide: true },
    },
    async (request, reply) => {
      const path = request.url.split('?')[0];
      if (isServerPath(path)) return reply.callNotFound();
      reply.headers(CONSOLE_HEADERS);
      if (path.startsWith('/assets/')) {
        return reply.sendFile(path.slice(1), { maxAge: YEAR_MS, immutable: true });
      }
      return sendIndex(reply);
    },
  );
}
