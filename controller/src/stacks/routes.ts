import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { RevealQuery } from '../configs/schemas';
import {
  RenderJob,
  ResolveBody,
  VARIABLE_VALUES_BODY_LIMIT,
  ResolveResult,
  Stack,
  StackBody,
  StackChanges,
  StackQuery,
  StackRenderBody,
  type VariableValuesT,
} from './schemas';

const tags = ['stacks'];
const permission = 'devices.access' as const;

/** The body's variable_values, or the body itself when it is a variable_values object. */
function variableValuesOf(body: Record<string, unknown> | undefined): VariableValuesT {
  if (!body) return {};
  if (body.variable_values) return body.variable_values as VariableValuesT;
  return Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'variable_values')) as VariableValuesT;
}

/** Stacks under /api/config: CRUD, render (nothing pushed) and resolve-variables. */
export async function stackRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { stacks, configs } = app.services;

  app.get(
    '/stacks',
    {
      config: { permission },
      schema: { tags, summary: 'List stacks', querystring: StackQuery, response: { 200: Type.Array(Stack), ...errorResponses(400, 401, 403) } },
    },
    async (request) => stacks.list(caller(request).orgId, request.query.limit ?? 100, request.query.offset ?? 0),
  );

  app.post(
    '/stacks',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Create a stack (ordered services, each pointing at a template)',
        body: StackBody,
        response: { 201: Stack, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(stacks.shown(await stacks.create(caller(request), request.body))),
  );

  app.get(
    '/stacks/:id',
    {
      config: { permission },
      schema: { tags, summary: 'One stack', params: IdParams, response: { 200: Stack, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => stacks.shown(await stacks.get(caller(request).orgId, request.params.id)),
  );

  app.put(
    '/stacks/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Change a stack; only the fields sent change (services are replaced as a whole)',
        params: IdParams,
        body: StackChanges,
        response: { 200: Stack, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => stacks.shown(await stacks.update(caller(request), request.params.id, request.body)),
  );

  app.delete(
    '/stacks/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Delete a stack (its deployments stay)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await stacks.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/stacks/:id/render',
    {
      config: { permission },
      bodyLimit: VARIABLE_VALUES_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Render every service for its devices; nothing is pushed',
        description:
          "The device secrets in the rendered configs, and the stack's secret default variables (names with password, secret, key, community, " +
          'token …) wherever they appear, are masked as in stored configs unless reveal=true.',
        params: IdParams,
        querystring: RevealQuery,
        body: StackRenderBody,
        response: { 200: Type.Object({ jobs: Type.Array(RenderJob) }), ...errorResponses(400, 401, 403, 404, 413) },
      },
    },
    async (request) => {
      const me = caller(request);
      const stack = await stacks.get(me.orgId, request.params.id);
      const render = () => stacks.resolve(me.orgId, stack, variableValuesOf(request.body as Record<string, unknown> | undefined));
      if (request.query.reveal === true) return { jobs: await configs.revealed(me, { stack_id: stack.id }, 'stack render', render) };
      const jobs = await render();
      const defaults = stacks.secrets.values(stack.services.map((s) => s.variables ?? {}));
      const shown = await configs.maskTexts(
        me.orgId,
        jobs.map((j) => ({ deviceId: j.device_id, text: j.rendered_config, format: j.config_format })),
      );
      return { jobs: jobs.map((j, i) => ({ ...j, rendered_config: stacks.secrets.hide(shown[i], defaults) })) };
    },
  );

  app.post(
    '/stacks/:id/resolve-variables',
    {
      config: { permission },
      bodyLimit: VARIABLE_VALUES_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Fill device_vars with the values of variables mapped to API resources (api_variables, variable_config sources)',
        params: IdParams,
        body: ResolveBody,
        response: { 200: ResolveResult, ...errorResponses(400, 401, 403, 404, 413) },
      },
    },
    async (request) => {
      const orgId = caller(request).orgId;
      const stack = await stacks.get(orgId, request.params.id);
      const body = request.body ?? {};
      let values = body.variable_values ?? {};
      if (body.devices && !body.variable_values) values = Object.fromEntries(stack.services.map((_, i) => [String(i), { devices: body.devices! }]));
      return stacks.resolveVariables(orgId, stack, values);
    },
  );
}
