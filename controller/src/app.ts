import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerAreas } from './areas';
import type { ControllerConfig } from './config';
import { DEFAULT_BODY_LIMIT } from './http/body-limits';
import { fastifyTrustProxy } from './http/trust-proxy';
import type { Db } from './db/knex';
import { accessRuleOf, authPlugin, type AccessRule } from './auth/route-guard';
import { authLimitsPlugin } from './plugins/auth-limits';
import { clientErrorHandler, errorHandlerPlugin, frameworkErrorHandler } from './plugins/error-handler';
import { openapiPlugin } from './plugins/openapi';
import { expectContinuePlugin } from './plugins/expect-continue';
import { lingeringClosePlugin } from './plugins/lingering-close';
import { securityHeadersPlugin } from './plugins/security-headers';
import { opsPlugin } from './ops/plugin';
import { validationPlugin } from './plugins/validation';
import { compose } from './composition';

export interface AppOptions {
  config: ControllerConfig;
  db: Db;
  log: Logger;
  /** HTTPS options when SWITCHBOARD_TLS is on. */
  https?: { key: string; cert: string } | null;
  /** Largest request body in bytes (default DEFAULT_BODY_LIMIT; imports and variable_values routes have their own). */
  bodyLimit?: number;
}

export interface RegisteredRoute {
  method: string;
  url: string;
  /** Declared `config.public` (no token needed). */
  public: boolean;
  /** A WebSocket endpoint (@fastify/websocket keeps these out of the OpenAPI document). */
  websocket: boolean;
  /** Who may call it: 'public', 'authenticated' or the permission it needs (auth/route-guard.ts). */
  access?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every method and URL the app registered (including Fastify's HEAD twins of GET routes). */
    registeredRoutes: RegisteredRoute[];
  }
}

function recordRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    const access = accessRuleOf(route.config as AccessRule | undefined) ?? undefined;
    const websocket = Boolean((route as { websocket?: boolean }).websocket);
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, public: access === 'public', websocket, access });
  });
}

/** Builds the controller's HTTP app; the caller listens and closes it. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.log,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    trustProxy: fastifyTrustProxy(options.config.trustProxy),
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;
  const listeningPorts = () => {
    const address = app.server.address();
    return address && typeof address === 'object' ? [address.port] : [];
  };
  const { services, lifecycle } = await compose({ config: options.config, db: options.db, log: options.log, listeningPorts });
  app.decorate('services', services);
  // Background parts start once every route is mounted and stop, in reverse, with the app.
  app.addHook('onReady', async () => lifecycle.start());
  app.addHook('onClose', async () => lifecycle.stop());
  await validationPlugin(app);
  await errorHandlerPlugin(app);
  await lingeringClosePlugin(app);
  await expectContinuePlugin(app);
  await authLimitsPlugin(app);
  await authPlugin(app);
  recordRoutes(app); // after authPlugin, which settles each route's access rule
  await securityHeadersPlugin(app);
  await openapiPlugin(app);
  await opsPlugin(app); // /healthz, /readyz, /metrics and request metrics
  await registerAreas(app);
  return app;
}
