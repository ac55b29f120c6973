import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, appError } from '../errors/app-error';

const AUTH_PREFIX = '/api/auth/';

/**
 * API.md's Limits for /api/auth/* only: requests per minute per client IP (in memory, read
 * from settings at start: "changes take effect after the API restarts") and the failed-login
 * lockout (kept in the database, so it holds across restarts and replicas).
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

  const check = async (request: FastifyRequest, reply: FastifyReply) => {
    await limit.call(app, request, reply);
    try {
      await auth.assertNotLockedOut(request.ip);
    } catch (err) {
      if (err instanceof AppError && err.code === 'LOGIN_LOCKED_OUT') reply.header('Retry-After', String(err.extra.retry_after_secs));
      throw err;
    }
  };
  // Callback style: every other request passes straight through, without a promise of its own.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.url.startsWith(AUTH_PREFIX)) return done();
    check(request, reply).then(() => done(), done);
  });
}
