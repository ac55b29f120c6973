import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/auth-service';
import type { Permission } from '../auth/permissions';
import { appError } from '../errors/app-error';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No Authorization needed (login, refresh, providers, docs, CA certificate). */
    public?: boolean;
    /** The permission the caller needs; routes outside /api/auth must name one. */
    permission?: Permission;
    /**
     * A value the route needs on every request, read in the same statement as the session check
     * to save a round trip: a SQL expression (from the area's store) whose every `?` is the
     * caller's organization id. The handler finds it in request.alongSession.
     */
    alongSession?: string;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    /** The value of the route's config.alongSession, once the caller is let in. */
    alongSession: unknown;
  }
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw appError('AUTH_REQUIRED');
  return request.auth;
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : '';
}

/**
 * Authentication and permissions for every /api route, declared per route in its config.
 * Also marks protected routes with the bearer security scheme for the API explorer.
 */
export async function authPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null);
  app.decorateRequest('alongSession', null);

  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { public?: boolean; permission?: Permission };
    const url = route.url;
    if (!url.startsWith('/api/') || url.startsWith('/api/docs')) return;
    if (!config.public && !config.permission && !url.startsWith('/api/auth/')) {
      throw new Error(`Route ${route.method} ${url} must declare config.permission or config.public`);
    }
    if (!config.public) route.schema = { ...route.schema, security: [{ bearerAuth: [] }] };
  });

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (!request.routeOptions.url || config?.public || !request.url.startsWith('/api/') || request.url.startsWith('/api/docs')) return;
    const token = bearerToken(request);
    if (token === null) throw appError('AUTH_REQUIRED');
    const found = token ? await app.services.auth.authenticateAlong(token, config?.alongSession) : null;
    if (!found) throw appError('INVALID_TOKEN');
    const { auth } = found;
    request.auth = auth;
    request.alongSession = found.along;
    if (config?.permission && !auth.permissions.includes(config.permission)) throw appError('FORBIDDEN');
  });
}
