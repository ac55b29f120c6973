import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { SecretBox } from '../../shared/src/crypto/secret-box';
import { AuditService } from './platform/audit-service';
import { AuditStore } from './platform/audit-store';
import { SettingsService } from './platform/settings-service';
import { SettingsStore } from './platform/settings-store';
import { registerAreas } from './areas';
import { AuthService } from './auth/auth-service';
import { enterpriseProviders } from './auth/enterprise-routes';
import { loadSshCa } from './auth/ssh-ca';
import { TokenSigner } from './auth/tokens';
import { createJobServices } from './jobs';
import { installationPrefix } from './agents/installation';
import type { ControllerConfig } from './config';
import { fastifyTrustProxy } from './http/trust-proxy';
import type { Db } from './db/knex';
import { accessRuleOf, authPlugin, type AccessRule } from './plugins/auth';
import { authLimitsPlugin } from './plugins/auth-limits';
import { errorHandlerPlugin } from './plugins/error-handler';
import { openapiPlugin } from './plugins/openapi';
import { securityHeadersPlugin } from './plugins/security-headers';
import { opsPlugin } from './ops/plugin';
import { validationPlugin } from './plugins/validation';
import type { Services } from './services';

export interface AppOptions {
  config: ControllerConfig;
  db: Db;
  log: Logger;
  /** HTTPS options when SWITCHBOARD_TLS is on. */
  https?: { key: string; cert: string } | null;
  /** Largest request body in bytes (imports have their own, larger limit). */
  bodyLimit?: number;
}

/** A NATS controller without SWITCHBOARD_NATS_PREFIX uses its installation's own namespace. */
async function withNatsNamespace(options: AppOptions): Promise<AppOptions> {
  const { config } = options;
  if (!config.natsUrl || config.natsPrefix || process.env.SWITCHBOARD_NATS_PREFIX) return options;
  return { ...options, config: { ...config, natsPrefix: await installationPrefix(options.db) } };
}

function createServices(options: AppOptions): Services {
  const { config, db } = options;
  const secrets = new SecretBox(config.secretKey);
  const signer = new TokenSigner(config.secretKey);
  const settings = new SettingsService(new SettingsStore(db), secrets);
  const audit = new AuditService(new AuditStore(db));
  const auth = new AuthService(db, signer, settings, audit);
  return {
    config,
    db,
    secrets,
    signer,
    settings,
    audit,
    auth,
    ...createJobServices({ config, db, log: options.log, secrets, settings, audit }),
    providers: () => enterpriseProviders(settings),
    sshCa: loadSshCa(config.dataDir),
  };
}

export interface RegisteredRoute {
  method: string;
  url: string;
  /** Declared `config.public` (no token needed). */
  public: boolean;
  /** A WebSocket endpoint (@fastify/websocket keeps these out of the OpenAPI document). */
  websocket: boolean;
  /** Who may call it: 'public', 'authenticated' or the permission it needs (plugins/auth.ts). */
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
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: fastifyTrustProxy(options.config.trustProxy),
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;
  app.decorate('services', createServices(await withNatsNamespace(options)));
  // Job machinery: starts once every area registered its outcome handlers, stops with the app.
  app.addHook('onReady', async () => app.services.jobEngine.start());
  app.addHook('onClose', async () => app.services.jobEngine.stop());
  await validationPlugin(app);
  await errorHandlerPlugin(app);
  await authLimitsPlugin(app);
  await authPlugin(app);
  recordRoutes(app); // after authPlugin, which settles each route's access rule
  await securityHeadersPlugin(app);
  await openapiPlugin(app);
  await opsPlugin(app); // /healthz, /readyz, /metrics and request metrics
  await registerAreas(app);
  return app;
}
