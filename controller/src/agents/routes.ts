import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IdParams, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { Agent, Enrollment, EnrollBody, NewAgent, NewAgentBody, SiteHealth, SitesHealth } from './schemas';

const tags = ['agents'];

/** Agents: create (enrollment token), enroll, list, revoke; site health. Mounted at /api. */
export async function agentsRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { agents } = app.services;

  app.get(
    '/agents',
    {
      config: { permission: 'devices.access' },
      schema: {
        tags,
        summary: 'Agents of the organization with status, load and job counts',
        response: { 200: Type.Object({ agents: Type.Array(Agent) }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ agents: await agents.list(caller(request).orgId) }),
  );

  app.post(
    '/agents',
    {
      config: { permission: 'agents.manage' },
      schema: {
        tags,
        summary: 'Create an agent; the answer carries its one-time enrollment token',
        body: NewAgentBody,
        response: { 201: NewAgent, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await agents.create(caller(request), request.body)),
  );

  app.post(
    '/agents/enroll',
    {
      config: { public: true },
      schema: {
        tags,
        summary: "Redeem an enrollment token with the agent's public key (called by `npm run agent`)",
        body: EnrollBody,
        response: { 200: Enrollment, ...errorResponses(400, 401, 503) },
      },
    },
    async (request) => agents.enroll(request.body),
  );

  app.delete(
    '/agents/:id',
    {
      config: { permission: 'agents.manage' },
      schema: {
        tags,
        summary: 'Revoke an agent: its results and heartbeats are refused from now on (and, in NATS operator mode, its NATS credentials)',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await agents.revoke(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  // Static beats parametric in the router, so this never reaches GET /api/sites/:id.
  const health = app.services.siteHealth;
  app.get(
    '/sites/health',
    {
      config: { permission: 'devices.access' },
      schema: {
        tags: ['sites', 'agents'],
        summary:
          'Every site and the default pool in one answer: agents, device reachability, backup freshness (24 h), last snapshot outcome, failing devices',
        response: { 200: SitesHealth, ...errorResponses(401, 403) },
      },
    },
    async (request) => health.overview(caller(request).orgId),
  );

  app.get(
    '/sites/:id/health',
    {
      config: { permission: 'devices.access' },
      schema: {
        tags: ['sites', 'agents'],
        summary: "The site's agents and device reachability from recent jobs",
        params: IdParams,
        response: { 200: SiteHealth, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => agents.siteHealth(caller(request).orgId, request.params.id),
  );
}
