import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { History, HistoryQuery, Source, SourceBody, SourceChanges, SourceList, SourceParams, SourceTest, SyncResult } from './schemas';

const tags = ['netbox'];
const config = { permission: 'devices.access' } as const;

/** NetBox sources and syncs. Mounted at /api/devices (paths /sources/netbox… and /sync/history). */
export async function netboxRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { netbox } = app.services;

  app.get(
    '/sources/netbox',
    {
      config,
      schema: { tags, summary: 'List NetBox sources (tokens omitted)', response: { 200: SourceList, ...errorResponses(401, 403) } },
    },
    async (request) => netbox.list(caller(request).orgId),
  );

  app.post(
    '/sources/netbox',
    {
      config,
      schema: {
        tags,
        summary: 'Create a NetBox source (needs settings.manage too; the url must pass netbox.allowed_hosts)',
        body: SourceBody,
        response: { 201: Source, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await netbox.create(caller(request), request.body)),
  );

  app.get(
    '/sources/netbox/:source_id',
    {
      config,
      schema: {
        tags,
        summary: 'One NetBox source (token omitted)',
        params: SourceParams,
        response: { 200: Source, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => netbox.get(caller(request).orgId, request.params.source_id),
  );

  app.put(
    '/sources/netbox/:source_id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a NetBox source: only fields sent change; an omitted token is kept; changing url needs settings.manage',
        params: SourceParams,
        body: SourceChanges,
        response: { 200: Source, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => netbox.update(caller(request), request.params.source_id, request.body),
  );

  app.delete(
    '/sources/netbox/:source_id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a NetBox source (its devices stay)',
        params: SourceParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await netbox.delete(caller(request), request.params.source_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/sources/netbox/:source_id/test',
    {
      config,
      schema: {
        tags,
        summary: 'Test the connection and count the devices device_filters matches',
        params: SourceParams,
        response: { 200: SourceTest, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => netbox.test(caller(request).orgId, request.params.source_id),
  );

  app.post(
    '/sources/netbox/:source_id/sync',
    {
      config,
      schema: {
        tags,
        summary: 'Import or update devices from NetBox now; a NetBox failure is reported in the result (status failed) and changes nothing',
        params: SourceParams,
        response: { 200: SyncResult, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => netbox.sync(caller(request), request.params.source_id),
  );

  app.get(
    '/sync/history',
    {
      config,
      schema: {
        tags,
        summary: 'Past NetBox sync results, newest first',
        querystring: HistoryQuery,
        response: { 200: History, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { source_id, limit = 50, offset = 0 } = request.query;
      return netbox.history(caller(request).orgId, source_id, limit, offset);
    },
  );
}
