import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Deployment, optionsOf, RunOptionsBody, type RunOptionsT } from '../deployments/schemas';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { VARIABLE_VALUES_BODY_LIMIT } from '../stacks/schemas';
import { Instance, InstanceBody, InstanceChanges, InstanceQuery } from './schemas';

const tags = ['instances'];

const permission = 'devices.access' as const;

/** Instances under /api/config: CRUD and deploy. */
export async function instanceRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { instances, deployments } = app.services;

  app.get(
    '/instances',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Saved instances',
        querystring: InstanceQuery,
        response: { 200: Type.Array(Instance), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => instances.list(caller(request).orgId, request.query.limit ?? 100, request.query.offset ?? 0),
  );

  app.post(
    '/instances',
    {
      config: { permission },
      bodyLimit: VARIABLE_VALUES_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Save an instance (a stack, its target devices and variable_values)',
        body: InstanceBody,
        response: { 201: Instance, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(instances.shown(await instances.create(caller(request), request.body))),
  );

  app.get(
    '/instances/:id',
    {
      config: { permission },
      schema: { tags, summary: 'One instance', params: IdParams, response: { 200: Instance, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => instances.shown(await instances.get(caller(request).orgId, request.params.id)),
  );

  app.put(
    '/instances/:id',
    {
      config: { permission },
      bodyLimit: VARIABLE_VALUES_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Change an instance; only the fields sent change',
        params: IdParams,
        body: InstanceChanges,
        response: { 200: Instance, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => instances.shown(await instances.update(caller(request), request.params.id, request.body)),
  );

  app.delete(
    '/instances/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Delete an instance (and its scheduled deployment tasks); its deployments stay',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await instances.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/instances/:id/deploy',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Deploy the instance: 201 with a deployment in status pending',
        params: IdParams,
        body: RunOptionsBody,
        response: { 201: Deployment, ...errorResponses(400, 401, 403, 404, 409, 413) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(deployments.shown(await instances.deploy(caller(request), request.params.id, '', optionsOf<RunOptionsT>(request.body)))),
  );
}
