import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { AssignBody, Profile, ProfileBody, ProfileChanges, ProfileList, Updated } from './schemas';

const tags = ['profiles'];
const config = { permission: 'devices.access' } as const;

/** Connection profiles (DESIGN.md): credentials and ports devices log in with. Mounted at /api/profiles. */
export async function profileRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { profiles } = app.services;

  app.get(
    '',
    {
      config,
      schema: {
        tags,
        summary: 'List connection profiles (secrets appear only as has_* flags)',
        response: { 200: ProfileList, ...errorResponses(401, 403) },
      },
    },
    async (request) => profiles.list(caller(request).orgId),
  );

  app.post(
    '',
    {
      config,
      schema: { tags, summary: 'Create a connection profile', body: ProfileBody, response: { 201: Profile, ...errorResponses(400, 401, 403, 409) } },
    },
    async (request, reply) => reply.code(201).send(await profiles.create(caller(request), request.body)),
  );

  app.post(
    '/assign',
    {
      config,
      schema: {
        tags,
        summary: 'Move devices to a connection profile',
        body: AssignBody,
        response: { 200: Updated, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ updated: await profiles.assign(caller(request), request.body.profile_id, request.body.device_ids) }),
  );

  app.get(
    '/:id',
    {
      config,
      schema: { tags, summary: 'One connection profile', params: IdParams, response: { 200: Profile, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => profiles.get(caller(request).orgId, request.params.id),
  );

  app.put(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a profile: only fields sent change; a secret sent as null is cleared',
        params: IdParams,
        body: ProfileChanges,
        response: { 200: Profile, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => profiles.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a profile no device uses (409 says how many still do)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await profiles.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
