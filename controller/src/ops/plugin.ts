import type { FastifyInstance } from 'fastify';
import { lazyRequestLogger } from '../logger';
import { opsRoutes } from './routes';
import { OpsService } from './service';

/**
 * Operations for the whole app (called from buildApp after the auth and OpenAPI plugins):
 * request metrics for every route, job metrics from the engine, the NATS watch once the job
 * engine started, and the /healthz, /readyz and /metrics routes.
 */
export async function opsPlugin(app: FastifyInstance): Promise<void> {
  const ops = new OpsService(app.services, app.log as never);
  app.services.ops = ops;
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
  // Runs after the job engine's own onReady hook (registered first in buildApp).
  app.addHook('onReady', async () => ops.watchTransport(app.services.jobEngine));
  await app.register(opsRoutes, { ops, metricsToken: app.services.config.metricsToken ?? null });
}
