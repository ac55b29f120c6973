import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ROLES } from '../auth/permissions';
import { appError } from '../errors/app-error';
import { IdParams, Paging, errorResponses } from '../http/schemas';
import { caller } from '../auth/route-guard';
import { AuditEntry, AuditQuery, NewUserBody, Organization, OrganizationBody, Role, RolesBody, User, UserChangesBody } from './schemas';

const tags = ['admin'];

/** The trimmed name; one of only spaces would show as a blank entry in every organization list. */
function organizationName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw appError(
      'INVALID_ORG_NAME',
      'The organization name is empty once leading and trailing spaces are removed; give a name with visible characters',
    );
  return trimmed;
}

/** Organizations, users and roles, settings and the audit log. */
export async function adminRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { settings, audit, users } = app.services;
  const { store } = users;

  app.get(
    '/organizations',
    {
      config: { permission: 'platform.admin' },
      schema: {
        tags,
        summary: 'List organizations',
        response: { 200: Type.Object({ organizations: Type.Array(Organization) }), ...errorResponses(401, 403) },
      },
    },
    async () => ({ organizations: await store.listOrganizations() }),
  );

  app.post(
    '/organizations',
    {
      config: { permission: 'platform.admin' },
      schema: {
        tags,
        summary: 'Create an organization',
        body: OrganizationBody,
        response: { 201: Organization, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const org = await store.createOrganization(organizationName(request.body.name));
      if (!org) throw appError('ORG_NAME_TAKEN');
      const me = caller(request);
      // Recorded where the administrator acts, like every other entry of theirs.
      await audit.byActor(me, 'admin.org_created', { org_id: org.id, name: org.name }, request.ip);
      return reply.code(201).send(org);
    },
  );

  app.put(
    '/organizations/:id',
    {
      config: { permission: 'platform.admin' },
      schema: {
        tags,
        summary: 'Rename an organization',
        params: IdParams,
        body: OrganizationBody,
        response: { 200: Organization, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const org = await store.renameOrganization(request.params.id, organizationName(request.body.name));
      if (org === undefined) throw appError('ORG_NOT_FOUND');
      if (org === null) throw appError('ORG_NAME_TAKEN');
      const me = caller(request);
      await audit.byActor(me, 'admin.org_renamed', { org_id: org.id, name: org.name }, request.ip);
      return org;
    },
  );

  app.get(
    '/roles',
    {
      config: { permission: 'users.manage' },
      schema: { tags, summary: 'Built-in roles and their permissions', response: { 200: Type.Object({ roles: Type.Array(Role) }) } },
    },
    async () => ({ roles: Object.entries(ROLES).map(([name, role]) => ({ name, ...role })) }),
  );

  app.get(
    '/users',
    {
      config: { permission: 'users.manage' },
      schema: {
        tags,
        summary: 'Users of the active organization',
        querystring: Type.Object(Paging(50, 500)),
        response: { 200: Type.Object({ users: Type.Array(User), total: Type.Integer() }), ...errorResponses(401, 403) },
      },
    },
    async (request) => store.listUsers(caller(request).orgId, request.query.limit ?? 50, request.query.offset ?? 0),
  );

  app.post(
    '/users',
    {
      config: { permission: 'users.manage' },
      schema: {
        tags,
        summary: 'Create a local user in the active organization',
        body: NewUserBody,
        response: { 201: User, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await users.create(caller(request), request.body)),
  );

  app.get(
    '/users/:id',
    {
      config: { permission: 'users.manage' },
      schema: { tags, summary: 'One user', params: IdParams, response: { 200: User, ...errorResponses(401, 403, 404) } },
    },
    async (request) => {
      const user = await store.findUser(caller(request).orgId, request.params.id);
      if (!user) throw appError('USER_NOT_FOUND');
      return user;
    },
  );

  app.put(
    '/users/:id',
    {
      config: { permission: 'users.manage' },
      schema: {
        tags,
        summary: 'Update a user; is_active false disables it and ends its sessions',
        params: IdParams,
        body: UserChangesBody,
        response: { 200: User, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => users.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/users/:id/roles',
    {
      config: { permission: 'users.manage' },
      schema: {
        tags,
        summary: "Replace a user's roles",
        params: IdParams,
        body: RolesBody,
        response: { 200: User, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => users.assignRoles(caller(request), request.params.id, request.body.roles),
  );

  app.get(
    '/settings',
    {
      config: { permission: 'settings.manage' },
      schema: {
        tags,
        summary: 'Effective settings for the active organization',
        response: { 200: Type.Object({ settings: Type.Record(Type.String(), Type.Unknown()) }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ settings: await settings.all(caller(request).orgId) }),
  );

  app.put(
    '/settings',
    {
      config: { permission: 'settings.manage' },
      schema: {
        tags,
        summary: 'Change settings; platform-wide keys need platform.admin',
        body: Type.Object({ settings: Type.Record(Type.String(), Type.Unknown(), { minProperties: 1 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ settings: Type.Record(Type.String(), Type.Unknown()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const me = caller(request);
      await settings.update(me.orgId, request.body.settings, me.permissions.includes('platform.admin'));
      await audit.byActor(me, 'admin.settings_changed', { keys: Object.keys(request.body.settings) });
      return { settings: await settings.all(me.orgId) };
    },
  );

  app.get(
    '/audit',
    {
      config: { permission: 'audit.read' },
      schema: {
        tags,
        summary: 'Audit log of the active organization (platform admins: add all=true for every organization)',
        querystring: Type.Composite([AuditQuery, Type.Object({ all: Type.Optional(Type.Boolean()) })]),
        response: { 200: Type.Object({ entries: Type.Array(AuditEntry), total: Type.Integer() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const me = caller(request);
      const { all, limit = 100, offset = 0, ...filter } = request.query;
      const orgId = all && me.isPlatformAdmin ? null : me.orgId;
      return audit.list({ ...filter, orgId, limit, offset });
    },
  );
}
