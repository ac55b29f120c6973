import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { bearerMatches } from '../../../shared/src/ops/bearer';
import { appError } from '../errors/app-error';
import { errorResponses } from '../http/schemas';
import { Health, MetricsText, NotReady, Ready } from './schemas';
import type { OpsService } from './service';

const tags = ['operations'];

/**
 * /healthz (process up), /readyz (ready for traffic) and /metrics (Prometheus). No user
 * token: health and readiness carry no secrets; metrics need SWITCHBOARD_METRICS_TOKEN.
 */
export async function opsRoutes(parent: FastifyInstance, options: { ops: OpsService; metricsToken: string | null }): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { ops, metricsToken } = options;

  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: { tags, summary: 'Liveness: the process is up and answering (no dependencies checked)', response: { 200: Health } },
    },
    async () => ({ status: 'ok' as const, uptime_seconds: Math.round((Date.now() - ops.startedAt) / 1000) }),
  );

  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Readiness: database reachable, migrations applied, NATS reachable (when configured), not shutting down; 503 names the failing part',
        response: { 200: Ready, 503: NotReady },
      },
    },
    async (_request, reply) => {
      const report = await ops.readiness.check();
      reply.header('cache-control', 'no-store');
      if (report.ready) return { status: 'ready' as const, checks: report.checks };
      throw appError('NOT_READY', `Not ready: ${report.failing.join('; ')}`, { checks: report.checks });
    },
  );

  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Prometheus metrics; bearer token SWITCHBOARD_METRICS_TOKEN (not a user token); 404 while that setting is unset',
        response: { 200: MetricsText, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      if (!metricsToken) throw appError('METRICS_DISABLED');
      if (!bearerMatches(request.headers.authorization, metricsToken)) {
        reply.header('www-authenticate', 'Bearer realm="switchboard-metrics"');
        throw appError('METRICS_TOKEN_REQUIRED');
      }
      const { contentType, body } = await ops.metrics.text();
      return reply.type(contentType).header('cache-control', 'no-store').send(body);
    },
  );
}
