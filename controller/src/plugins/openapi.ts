import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { routeDefaults } from '../auth/route-guard';

/**
 * The explorer's page needs swagger-ui's inline style attributes; everything else stays
 * same-origin and unframeable.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** OpenAPI document generated from every route's TypeBox schemas; explorer at /api/docs. */
export async function openapiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Switchboard API',
        version: '0.1.0',
        description: 'Network controller API. Use Authorize with an access token from POST /api/auth/login.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
  });
  // The explorer's routes come from the plugin, which cannot give them a config: its scope
  // declares them public (the document describes the API, it holds no data).
  await app.register(async (docs) => {
    routeDefaults(docs, { public: true });
    await docs.register(swaggerUi, {
      routePrefix: '/api/docs',
      staticCSP: DOCS_CSP,
      // A bearer token typed into the explorer is not kept in the origin's localStorage after the tab closes.
      uiConfig: { persistAuthorization: false, validatorUrl: null },
    });
  });
}
