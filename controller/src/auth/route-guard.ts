import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { AuthContext } from './auth-service';
import type { Permission } from './permissions';
import { appError } from '../errors/app-error';

/** Who may call a route: declared in every route's config (startup fails otherwise). */
export interface AccessRule {
  /** No Authorization needed (login, refresh, providers, docs, health, CA certificate). */
  public?: boolean;
  /** Any signed-in user (the caller's own account and sessions). */
  authenticated?: boolean;
  /** The permission the caller needs. */
  permission?: Permission;
}

declare module 'fastify' {
  interface FastifyContextConfig extends AccessRule {
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
  interface FastifyInstance {
    /** Config merged into every route of this scope (see routeDefaults). */
    routeConfigDefaults?: Record<string, unknown>;
  }
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw appError('AUTH_REQUIRED');
  return request.auth;
}

/**
 * Config every route of `scope` (and of plugins it registers) gets unless the route says
 * otherwise: how a scope declares the access rule or limits of routes a third-party plugin
 * registers (e.g. the API explorer's), whose options cannot carry a route config.
 */
export function routeDefaults(scope: FastifyInstance, config: Record<string, unknown>): void {
  // A plain property, not a decorator: a nested scope shadows its parent's without a clash.
  scope.routeConfigDefaults = { ...scope.routeConfigDefaults, ...config };
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : '';
}

export function accessRuleOf(config: AccessRule | undefined): 'public' | 'authenticated' | Permission | null {
  if (config?.public) return 'public';
  if (config?.permission) return config.permission;
  if (config?.authenticated) return 'authenticated';
  return null;
}

/** Applies the scope's defaults, then refuses a route without an access rule (default deny). */
function declareRoute(scope: FastifyInstance, route: RouteOptions): void {
  const defaults = scope.routeConfigDefaults;
  if (defaults) route.config = { ...defaults, ...(route.config as object) };
  const rule = accessRuleOf(route.config as AccessRule | undefined);
  if (!rule) {
    throw new Error(`Route ${String(route.method)} ${route.url} must declare config.public, config.authenticated or config.permission`);
  }
  if (rule !== 'public') route.schema = { ...route.schema, security: [{ bearerAuth: [] }] };
}

/**
 * Authentication and permissions for every route, decided from the matched route's declared
 * config, never from the raw URL (which can spell the same route many ways: /%61pi/...).
 * Also marks protected routes with the bearer security scheme for the API explorer.
 */
export async function authPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null);
  app.decorateRequest('alongSession', null);

  app.addHook('onRoute', function (this: FastifyInstance, route) {
    declareRoute(this, route);
  });

  app.addHook('onRequest', async (request) => {
    // No matched route: the not-found handler answers 404 and reveals nothing.
    if (!request.routeOptions.url) return;
    const config = request.routeOptions.config;
    if (config.public) return;
    const token = bearerToken(request);
    if (token === null) throw appError('AUTH_REQUIRED');
    const found = token ? await app.services.auth.authenticateAlong(token, config.alongSession) : null;
    if (!found) throw appError('INVALID_TOKEN');
    const { auth } = found;
    request.auth = auth;
    request.alongSession = found.along;
    if (config.permission && !auth.permissions.includes(config.permission)) throw appError('FORBIDDEN');
    // A route with neither rule cannot exist (declareRoute), but deny rather than trust that.
    if (!config.permission && !config.authenticated) throw appError('FORBIDDEN');
  });
}
