import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { appError } from '../errors/app-error';
import { clientInfo } from '../http/client-info';
import { IdParams, Message, errorResponses } from '../http/schemas';
import { caller, routeDefaults } from './route-guard';
import { enterpriseRoutes } from './enterprise-routes';
import {
  LoginBody,
  LogoutSchema,
  MeSchema,
  PasswordBody,
  ProvidersSchema,
  RefreshBody,
  SessionSchema,
  SwitchOrgBody,
  SwitchOrgSchema,
  TokenPairSchema,
} from './schemas';

const tags = ['auth'];

/**
 * The /api/auth rows of API.md (local accounts). The rate limit and failed-login lockout of
 * every /api/auth/* request live in plugins/auth-limits.ts, ahead of authentication.
 */
export async function authRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { auth } = app.services;
  // API.md: every /api/auth/* request counts toward the per-address rate limit and is refused
  // during a lockout, whichever spelling of the path reached the route.
  routeDefaults(app, { authLimits: { requests: true, lockout: true } });
  await app.register(enterpriseRoutes); // LDAP, OIDC and /login's public_key check (enterprise-routes.ts)
  const certificates = app.services.sshCertificates;

  app.post(
    '/login',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Sign in with a local account',
        body: LoginBody,
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request) => {
      const { username, password, client_type = 'admin_ui', public_key } = request.body;
      // A certificate is issued only by a service with an SSH CA, and only to holders of ssh.certificate.
      const issuer = public_key !== undefined ? certificates : null;
      const { pair, user, sessionId } = await auth.loginLocal(
        username,
        password,
        client_type,
        clientInfo(request),
        issuer ? (u) => issuer.assertPermitted(u) : undefined,
      );
      if (!issuer || public_key === undefined) return pair;
      return { ...pair, ssh_certificate: await issuer.issue(public_key, user, sessionId, pair.expires_in) };
    },
  );

  app.get(
    '/ssh/krl',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Key revocation list of the SSH CA (OpenSSH KRL, binary)',
        description:
          "For sshd's RevokedKeys: lists the certificates of sessions that ended (logout, password change, disabled user, revoked session) " +
          'until they expire. Fetch it regularly, e.g. every minute.',
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'OpenSSH KRL (PROTOCOL.krl)' }),
          ...errorResponses(404, 429),
        },
      },
    },
    async (_request, reply) => {
      return reply
        .header('content-type', 'application/octet-stream')
        .header('cache-control', 'no-store')
        .send(await certificates.krl());
    },
  );

  app.post(
    '/refresh',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Trade a refresh token for a new pair (single use)',
        body: RefreshBody,
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => auth.refresh(request.body.refresh_token, clientInfo(request)),
  );

  app.get(
    '/providers',
    {
      config: { public: true },
      schema: { tags, summary: 'Sign-in providers and whether each is enabled', response: { 200: ProvidersSchema, ...errorResponses(429) } },
    },
    async () => ({ providers: await app.services.providers() }),
  );

  app.get(
    '/me',
    {
      config: { authenticated: true },
      schema: { tags, summary: 'The signed-in user', response: { 200: MeSchema, ...errorResponses(401, 429) } },
    },
    async (request) => {
      const me = caller(request);
      const user = await auth.store.findUserById(me.userId);
      if (!user) throw appError('INVALID_TOKEN');
      const { password_hash: _hidden, home_org_id, ...rest } = user;
      return { ...rest, org_id: me.orgId, home_org_id, permissions: me.permissions };
    },
  );

  app.post(
    '/logout',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: 'Revoke every session of the caller and free the license seat',
        response: { 200: LogoutSchema, ...errorResponses(401, 429) },
      },
    },
    async (request) => ({
      message: 'Logged out; all sessions revoked',
      sessions_revoked: await auth.logout(caller(request), clientInfo(request)),
    }),
  );

  app.put(
    '/password',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: 'Change the password of a local account',
        body: PasswordBody,
        response: { 200: Message, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      await auth.changePassword(caller(request), request.body.current_password, request.body.new_password, clientInfo(request));
      return { message: 'Password changed; other sessions were revoked' };
    },
  );

  app.get(
    '/sessions',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: "The caller's active sessions",
        response: { 200: Type.Object({ sessions: Type.Array(SessionSchema) }), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const me = caller(request);
      const rows = await auth.store.listActiveSessions(me.userId);
      return { sessions: rows.map((row: { id: string }) => ({ ...row, current: row.id === me.sessionId })) };
    },
  );

  app.delete(
    '/sessions/other',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: "Revoke all the caller's other sessions",
        response: { 200: Type.Object({ message: Type.String(), sessions_revoked: Type.Integer() }), ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const me = caller(request);
      const revoked = await auth.store.revokeUserSessions(me.userId, 'revoked by user', me.sessionId);
      return { message: 'Other sessions revoked', sessions_revoked: revoked };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      config: { authenticated: true },
      schema: {
        tags,
        summary: "Revoke one of the caller's sessions",
        params: IdParams,
        response: { 200: Message, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const me = caller(request);
      const revoked = await auth.store.revokeSession(request.params.id, 'revoked by user', me.userId);
      if (revoked === 0) throw appError('SESSION_NOT_FOUND');
      return { message: 'Session revoked' };
    },
  );

  app.post(
    '/switch-org',
    {
      config: { permission: 'platform.admin' },
      schema: {
        tags,
        summary: 'Work inside another organization (platform administrators)',
        body: SwitchOrgBody,
        response: { 200: SwitchOrgSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => auth.switchOrg(caller(request), request.body.org_id, clientInfo(request)),
  );
}
