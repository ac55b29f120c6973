import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { Site, SiteBody, SiteChanges, SiteList } from './schemas';

const tags = ['sites'];
const config = { permission: 'devices.access' } as const;

/** Sites with parent_site_id nesting. Mounted at /api/sites. */
export async function siteRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { sites } = app.services;

  app.get(
    '',
    {
      config,
      schema: { tags, summary: 'List sites', response: { 200: SiteList, ...errorResponses(401, 403) } },
    },
    async (request) => sites.list(caller(request).orgId),
  );

  app.post(
    '',
    {
      config,
      schema: { tags, summary: 'Create a site', body: SiteBody, response: { 201: Site, ...errorResponses(400, 401, 403, 409) } },
    },
    async (request, reply) => reply.code(201).send(await sites.create(caller(request), request.body)),
  );

  app.get(
    '/:id',
    {
      config,
      schema: { tags, summary: 'One site', params: IdParams, response: { 200: Site, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => sites.get(caller(request).orgId, request.params.id),
  );

  app.put(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a site: only fields sent change; parent_site_id null makes it top-level',
        params: IdParams,
        body: SiteChanges,
        response: { 200: Site, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => sites.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a site with no devices and no child sites (409 says how many remain)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await sites.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
