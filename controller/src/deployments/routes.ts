import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { RevealQuery } from '../configs/schemas';
import { VARIABLE_VALUES_BODY_LIMIT } from '../stacks/schemas';
import {
  Deployment,
  DeploymentBody,
  DeploymentQuery,
  DeploymentWithDevices,
  LogPage,
  LogQuery,
  optionsOf,
  RollbackBody,
  type RollbackOptionsT,
} from './schemas';

const tags = ['deployments'];
const permission = 'devices.access' as const;

/** Deployments under /api/config: create (201 pending), list, one with devices, logs, rollback. */
export async function deploymentRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { deployments, configs } = app.services;

  app.post(
    '/deployments',
    {
      config: { permission },
      bodyLimit: VARIABLE_VALUES_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Deploy a stack: 201 pending at once, the run continues in the background',
        body: DeploymentBody,
        response: { 201: Deployment, ...errorResponses(400, 401, 403, 409, 413) },
      },
    },
    async (request, reply) => reply.code(201).send(deployments.shown(await deployments.create(caller(request), request.body))),
  );

  app.get(
    '/deployments',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Deployments, newest first',
        querystring: DeploymentQuery,
        response: { 200: Type.Array(Deployment), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { stack_id, limit = 100, offset = 0 } = request.query;
      return deployments.list(caller(request).orgId, { stack_id, limit, offset });
    },
  );

  app.get(
    '/deployments/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'One deployment with its devices (one entry per device and service)',
        description:
          'The device secrets in rendered configs and dry-run diffs, and the values of variables whose name says they hold a secret ' +
          '(password, secret, key, community, token …), are masked as in stored configs unless reveal=true.',
        params: IdParams,
        querystring: RevealQuery,
        response: { 200: DeploymentWithDevices, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const me = caller(request);
      const { id } = request.params;
      if (request.query.reveal !== true) return deployments.getWithDevices(me.orgId, id);
      return configs.revealed(me, { deployment_id: id }, 'deployment', () => deployments.getWithDevices(me.orgId, id, true));
    },
  );

  app.get(
    '/deployments/:id/logs',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Log lines of a deployment (paged: limit default 100, maximum 1000)',
        params: IdParams,
        querystring: LogQuery,
        response: { 200: LogPage, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { device_id, limit = 100, offset = 0 } = request.query;
      return deployments.logs(caller(request).orgId, request.params.id, { device_id, limit, offset });
    },
  );

  app.post(
    '/deployments/:id/rollback',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Push back every pre-deployment backup (replace); from completed or failed only',
        description:
          'A device whose running config is no longer the one the deployment left (changed since) is not rolled back unless the body ' +
          'says force; a device another open deployment is changing refuses the whole rollback with 409.',
        params: IdParams,
        body: RollbackBody,
        response: { 200: Deployment, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) =>
      deployments.shown(await deployments.rollback(caller(request), request.params.id, optionsOf<RollbackOptionsT>(request.body).force === true)),
  );
}
