import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { appError } from '../errors/app-error';

/** API.md's Limits, declared per route (every /api/auth/* route declares both). */
export interface AuthLimits {
  /** Counts toward the per-address requests-per-minute limit (one budget shared by every such route). */
  requests?: boolean;
  /** Refused while the client address is locked out after failed logins. */
  lockout?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    authLimits?: AuthLimits;
  }
}

/**
 * The request rate limit per client IP (in memory, read from settings at start: "changes take
 * effect after the API restarts") and the failed-login lockout (kept in the database, so it holds
 * across restarts and replicas), for the routes whose config declares them. Decided from the
 * matched route, so every spelling of a path (/api/%61uth/login) gets the same limits.
 *
 * Both run as one root onRequest hook registered before authentication, so a flood of bad
 * tokens or bad passwords is counted and refused before any token or password work is done.
 */
export async function authLimitsPlugin(app: FastifyInstance): Promise<void> {
  const { auth, settings } = app.services;
  await app.register(rateLimit, { global: false });
  const limit = app.rateLimit({
    max: await settings.get<number>('security.rate_limit.requests_per_minute'),
    timeWindow: 60_000,
    errorResponseBuilder: (_request, context) =>
      appError('RATE_LIMITED', undefined, { retry_after_secs: Math.max(1, Math.ceil(context.ttl / 1000)) }),
  });

  const check = async (request: FastifyRequest, reply: FastifyReply, limits: AuthLimits) => {
    if (limits.requests) await limit.call(app, request, reply);
    if (limits.lockout) await auth.assertNotLockedOut({ ip: request.ip });
  };
  // Callback style: every other request passes straight through, without a promise of its own.
  app.addHook('onRequest', (request, reply, done) => {
    const limits = request.routeOptions.config?.authLimits;
    if (!limits) return done();
    check(request, reply, limits).then(() => done(), done);
  });
}
