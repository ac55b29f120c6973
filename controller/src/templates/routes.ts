import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import {
  RenderBody,
  RenderResult,
  Template,
  TemplateBody,
  TemplateChanges,
  TemplateQuery,
  TemplateSummary,
  TemplateVersion,
  ValidateBody,
  ValidateResult,
  VersionParams,
} from './schemas';

const tags = ['templates'];
const permission = 'devices.access' as const;

/** Config templates under /api/config: CRUD, versions and render. */
export async function templateRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { templates } = app.services;

  app.get(
    '/templates',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'List templates (without source)',
        querystring: TemplateQuery,
        response: { 200: Type.Array(TemplateSummary), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { platform, limit = 100, offset = 0 } = request.query;
      return templates.store.list(caller(request).orgId, { platform, limit, offset });
    },
  );

  app.post(
    '/templates',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Create a template; variables are derived from its source',
        body: TemplateBody,
        response: { 201: Template, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(await templates.create(caller(request), request.body)),
  );

  app.post(
    '/templates/validate',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Check a template source without saving it: its syntax error with line and column, or its variables',
        body: ValidateBody,
        response: { 200: ValidateResult, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => templates.validate(request.body.source),
  );

  app.get(
    '/templates/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'One template including source',
        params: IdParams,
        response: { 200: Template, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => templates.get(caller(request).orgId, request.params.id),
  );

  app.put(
    '/templates/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Change a template; a source change adds a version',
        params: IdParams,
        body: TemplateChanges,
        response: { 200: Template, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => templates.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/templates/:id',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Delete a template and its versions',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await templates.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/templates/:id/render',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Render the template (or one version) with variables; nothing is sent to devices',
        params: IdParams,
        body: RenderBody,
        response: { 200: RenderResult, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => templates.render(caller(request).orgId, request.params.id, request.body.variables ?? {}, request.body.version),
  );

  app.get(
    '/templates/:id/versions',
    {
      config: { permission },
      schema: {
        tags,
        summary: 'Versions of a template, newest first',
        params: IdParams,
        response: { 200: Type.Array(TemplateVersion), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => templates.versions(caller(request).orgId, request.params.id),
  );

  app.get(
    '/templates/:id/versions/:version',
    {
      config: { permission },
      schema: {
        tags,
        summary: "One version's source",
        params: VersionParams,
        response: { 200: TemplateVersion, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => templates.version(caller(request).orgId, request.params.id, request.params.version),
  );
}
