import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { appError } from '../errors/app-error';
import { IdParams, errorResponses } from '../http/schemas';
import { Platform } from './schemas';

const tags = ['templates'];

/** GET /api/config/platforms and /platforms/:id: the targets a template can name. */
export async function platformRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const store = app.services.platforms;

  app.get(
    '/platforms',
    {
      config: { permission: 'devices.access' },
      schema: {
        tags,
        summary: 'Platforms (transport, port and format a template targets)',
        response: { 200: Type.Array(Platform), ...errorResponses(401, 403) },
      },
    },
    async () => store.list(),
  );

  app.get(
    '/platforms/:id',
    {
      config: { permission: 'devices.access' },
      schema: { tags, summary: 'One platform', params: IdParams, response: { 200: Platform, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => {
      const platform = await store.findById(request.params.id);
      if (!platform) throw appError('PLATFORM_NOT_FOUND');
      return platform;
    },
  );
}
