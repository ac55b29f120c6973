import type { FastifyInstance } from 'fastify';
import { lazyRequestLogger } from '../logger';
import { opsRoutes } from './routes';

/**
 * Operations for the whole app (called from buildApp after the auth and OpenAPI plugins):
 * request metrics for every route, job metrics from the engine, the NATS watch once the job
 * engine started, and the /healthz, /readyz and /metrics routes.
 */
export async function opsPlugin(app: FastifyInstance): Promise<void> {
  const { ops } = app.services;
  // Routes registered from here on (every area's) make their request logger only when it logs.
  app.setChildLoggerFactory(lazyRequestLogger);
  // Per-request hooks in callback style: an async hook costs a promise and a microtask each time.
  app.addHook('onResponse', (request, reply, done) => {
    ops.metrics.observeRequest(request, reply);
    done();
  });
  // While draining, answers close their connection: a kept-alive connection that goes idle
  // after the server stopped listening would otherwise hold the stop until its keep-alive ends.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (ops.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  await app.register(opsRoutes, { ops, metricsToken: app.services.config.metricsToken ?? null });
}
