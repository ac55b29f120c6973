import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
let orgAdmin: Awaited<ReturnType<TestController['createOrgUser']>>;
beforeAll(async () => {
  c = await startTestController();
  orgAdmin = await c.createOrgUser(['org_admin']);
});
afterAll(async () => c?.close());

const PASSWORD = 'a perfectly fine pass phrase';
const createUser = (body: Record<string, unknown>, token = orgAdmin.token) => c.request('POST', '/api/admin/users', { token, body });

describe('POST /api/admin/users', () => {
  it('creates a local user in the active organization (201) who can sign in', async () => {
    const res = await createUser({ username: 'alice', password: PASSWORD, email: 'alice@example.net', display_name: 'Alice', roles: ['operator'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      username: 'alice',
      email: 'alice@example.net',
      display_name: 'Alice',
      roles: ['operator'],
      home_org_id: orgAdmin.orgId,
      is_active: true,
      is_platform_admin: false,
      auth_provider: 'local',
    });
    expect(res.body).not.toHaveProperty('password_hash');
    expect(res.body).not.toHaveProperty('password');
    const login = await c.login('alice', PASSWORD);
    expect(login.status).toBe(200);
    const me = await c.request('GET', '/api/auth/me', { token: login.body.access_token });
    expect(me.body.permissions).toEqual(['devices.access', 'ssh.certificate']);
  });

  it('answers 409 for a taken username, whatever its case', async () => {
    const res = await createUser({ username: 'ALICE', password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('A user with this username already exists');
  });

  it('answers 400 for an unknown role, naming it', async () => {
    const res = await createUser({ username: 'bob', password: PASSWORD, roles: ['operator', 'wizard'] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNKNOWN_ROLE');
    expect(res.body.error).toContain('wizard');
  });

  it('answers 400 for a weak password', async () => {
    const short = await createUser({ username: 'bob', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('Password must be at least 12 characters long');
    const common = await createUser({ username: 'bob', password: 'password1234' });
    expect(common.status).toBe(400);
    expect(common.body.error).toMatch(/too common/);
  });

  it('answers 400 for a bad username, a mistyped field or an unknown field', async () => {
    for (const body of [
      { username: 'has space', password: PASSWORD },
      { username: 'bob', password: PASSWORD, roles: 'operator' },
      { username: 'bob', password: PASSWORD, is_admin: true },
      { username: 'bob' },
    ]) {
      const res = await createUser(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^body/);
    }
  });

  it("answers 400 RESERVED_USERNAME for a system account's name, whatever its case, for organization and platform administrators", async () => {
    for (const [username, token] of [
      ['root', orgAdmin.token],
      ['ROOT', orgAdmin.token],
      ['www-data', orgAdmin.token],
      ['nobody', orgAdmin.token],
      ['systemd-network', orgAdmin.token],
      ['_apt', orgAdmin.token],
      ['ubuntu', orgAdmin.token],
      ['root', c.adminToken],
      ['postgres', c.adminToken],
    ]) {
      const res = await createUser({ username, password: PASSWORD, roles: ['operator'] }, token);
      expect(res.status, username).toBe(400);
      expect(res.body.code).toBe('RESERVED_USERNAME');
      expect(res.body.error).toBe(
        `The username '${username}' is the name of a system account (root, daemon, www-data, admin, systemd-*, _apt, ...) on servers that ` +
          "trust Switchboard's SSH certificates; choose another name, such as 'jdoe'",
      );
    }
    expect(await c.db('users').whereRaw('lower(username) in (?, ?)', ['root', 'www-data'])).toEqual([]);
    // Names that only contain one are fine.
    for (const username of ['rooted', 'jroot', 'www-data-team', 'sys.admin']) {
      expect((await createUser({ username, password: PASSWORD })).status, username).toBe(201);
    }
  });

  it('lets only a platform administrator grant platform_admin', async () => {
    const res = await createUser({ username: 'sneaky', password: PASSWORD, roles: ['platform_admin'] });
    expect(res.status).toBe(403);
  });
});

describe('GET /api/admin/users and /api/admin/users/:id', () => {
  it('lists the users of the active organization with paging', async () => {
    await createUser({ username: 'carol', password: PASSWORD });
    const all = await c.request('GET', '/api/admin/users', { token: orgAdmin.token });
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(all.body.users.length);
    expect(all.body.users.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(['alice', 'carol', orgAdmin.username]));
    expect(all.body.users.every((u: { home_org_id: string }) => u.home_org_id === orgAdmin.orgId)).toBe(true);
    for (const user of all.body.users) expect(user).not.toHaveProperty('password_hash');
    const page = await c.request('GET', '/api/admin/users?limit=1&offset=1', { token: orgAdmin.token });
    expect(page.body.users).toHaveLength(1);
    expect(page.body.total).toBe(all.body.total);
    expect(page.body.users[0].id).toBe(all.body.users[1].id);
    expect((await c.request('GET', '/api/admin/users?limit=0', { token: orgAdmin.token })).status).toBe(400);
  });

  it('gets one user, 404 for an unknown id, 400 for a bad id', async () => {
    const alice = (await c.request('GET', '/api/admin/users', { token: orgAdmin.token })).body.users.find(
      (u: { username: string }) => u.username === 'alice',
    );
    const res = await c.request('GET', `/api/admin/users/${alice.id}`, { token: orgAdmin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: alice.id, username: 'alice' });
    expect((await c.request('GET', `/api/admin/users/${randomUUID()}`, { token: orgAdmin.token })).status).toBe(404);
    const bad = await c.request('GET', '/api/admin/users/42', { token: orgAdmin.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('params.id must be a UUID');
  });
});

describe('PUT /api/admin/users/:id', () => {
  it('updates fields and answers with the user', async () => {
    const user = (await createUser({ username: 'dave', password: PASSWORD })).body;
    const res = await c.request('PUT', `/api/admin/users/${user.id}`, {
      token: orgAdmin.token,
      body: { display_name: 'Dave D.', email: 'dave@example.net' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ display_name: 'Dave D.', email: 'dave@example.net' });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(user.updated_at).getTime());
  });

  it('disabling a user kills their sessions at once and refuses new logins', async () => {
    const user = (await createUser({ username: 'erin', password: PASSWORD, roles: ['operator'] })).body;
    const session = (await c.login('erin', PASSWORD)).body;
    const res = await c.request('PUT', `/api/admin/users/${user.id}`, { token: orgAdmin.token, body: { is_active: false } });
    expect(res.status).toBe(200);
    expect(res.body.is_active).toBe(false);
    expect((await c.request('GET', '/api/auth/me', { token: session.access_token })).status).toBe(401);
    expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: session.refresh_token } })).status).toBe(401);
    expect((await c.login('erin', PASSWORD)).status).toBe(401);
    // Enabled again, the user signs in again.
    await c.request('PUT', `/api/admin/users/${user.id}`, { token: orgAdmin.token, body: { is_active: true } });
    expect((await c.login('erin', PASSWORD)).status).toBe(200);
  });

  it('resets a password (rules apply) and ends the sessions', async () => {
    const user = (await createUser({ username: 'frank', password: PASSWORD })).body;
    const session = (await c.login('frank', PASSWORD)).body;
    const weak = await c.request('PUT', `/api/admin/users/${user.id}`, { token: orgAdmin.token, body: { password: 'short' } });
    expect(weak.status).toBe(400);
    const res = await c.request('PUT', `/api/admin/users/${user.id}`, { token: orgAdmin.token, body: { password: 'a reset pass phrase for frank' } });
    expect(res.status).toBe(200);
    expect((await c.request('GET', '/api/auth/me', { token: session.access_token })).status).toBe(401);
    expect((await c.login('frank', 'a reset pass phrase for frank')).status).toBe(200);
  });

  it('refuses to disable oneself, an empty change, an unknown field and an unknown user', async () => {
    const self = await c.request('PUT', `/api/admin/users/${orgAdmin.userId}`, { token: orgAdmin.token, body: { is_active: false } });
    expect(self.status).toBe(400);
    expect(self.body.code).toBe('CANNOT_DISABLE_SELF');
    expect((await c.request('PUT', `/api/admin/users/${orgAdmin.userId}`, { token: orgAdmin.token, body: {} })).status).toBe(400);
    expect((await c.request('PUT', `/api/admin/users/${orgAdmin.userId}`, { token: orgAdmin.token, body: { username: 'renamed' } })).status).toBe(
      400,
    );
    expect((await c.request('PUT', `/api/admin/users/${randomUUID()}`, { token: orgAdmin.token, body: { display_name: 'x' } })).status).toBe(404);
  });

  it('does not let an organization administrator change a platform administrator', async () => {
    // An org_admin of the default organization, where the bootstrap platform admin lives.
    const created = await createUser({ username: 'default-org-admin', password: PASSWORD, roles: ['org_admin'] }, c.adminToken);
    expect(created.status).toBe(201);
    const token = (await c.login('default-org-admin', PASSWORD)).body.access_token;
    const adminId = (await c.request('GET', '/api/auth/me', { token: c.adminToken })).body.id;
    for (const body of [{ password: 'a takeover pass phrase' }, { is_active: false }]) {
      const res = await c.request('PUT', `/api/admin/users/${adminId}`, { token, body });
      expect(res.status).toBe(403);
    }
    const roles = await c.request('PUT', `/api/admin/users/${adminId}/roles`, { token, body: { roles: ['operator'] } });
    expect(roles.status).toBe(403);
    expect((await c.request('GET', '/api/auth/me', { token: c.adminToken })).status).toBe(200);
  });
});

describe('PUT /api/admin/users/:id/roles', () => {
  it('replaces the roles, and permissions follow at once', async () => {
    const user = (await createUser({ username: 'grace', password: PASSWORD, roles: ['operator'] })).body;
    const token = (await c.login('grace', PASSWORD)).body.access_token;
    expect((await c.request('GET', '/api/admin/users', { token })).status).toBe(403);
    const res = await c.request('PUT', `/api/admin/users/${user.id}/roles`, { token: orgAdmin.token, body: { roles: ['org_admin'] } });
    expect(res.status).toBe(200);
    expect(res.body.roles).toEqual(['org_admin']);
    const me = await c.request('GET', '/api/auth/me', { token });
    expect(me.body.permissions).toEqual(expect.arrayContaining(['users.manage', 'settings.manage', 'audit.read', 'devices.access']));
    expect(me.body.permissions).not.toContain('platform.admin');
    expect((await c.request('GET', '/api/admin/users', { token })).status).toBe(200);
  });

  it('answers 400 for an unknown role or own roles, 404 for an unknown user, 403 for platform_admin', async () => {
    const user = (await createUser({ username: 'heidi', password: PASSWORD })).body;
    expect((await c.request('PUT', `/api/admin/users/${user.id}/roles`, { token: orgAdmin.token, body: { roles: ['root'] } })).status).toBe(400);
    expect(
      (await c.request('PUT', `/api/admin/users/${orgAdmin.userId}/roles`, { token: orgAdmin.token, body: { roles: ['operator'] } })).status,
    ).toBe(400);
    expect((await c.request('PUT', `/api/admin/users/${randomUUID()}/roles`, { token: orgAdmin.token, body: { roles: [] } })).status).toBe(404);
    expect((await c.request('PUT', `/api/admin/users/${user.id}/roles`, { token: orgAdmin.token, body: { roles: ['platform_admin'] } })).status).toBe(
      403,
    );
    expect(
      (await c.request('PUT', `/api/admin/users/${user.id}/roles`, { token: orgAdmin.token, body: { roles: ['operator', 'operator'] } })).status,
    ).toBe(400);
  });
});

describe('a user with no roles', () => {
  it('gets 403 on admin routes but can use /api/auth/*', async () => {
    const created = await createUser({ username: 'ivan', password: PASSWORD, roles: [] });
    expect(created.status).toBe(201);
    const login = await c.login('ivan', PASSWORD);
    expect(login.status).toBe(200);
    const token = login.body.access_token;
    for (const path of ['/api/admin/users', '/api/admin/roles', '/api/admin/settings', '/api/admin/audit', '/api/admin/organizations']) {
      const res = await c.request('GET', path, { token });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('Insufficient permissions');
    }
    const me = await c.request('GET', '/api/auth/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ roles: [], permissions: [] });
    expect((await c.request('GET', '/api/auth/sessions', { token })).status).toBe(200);
    const refreshed = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } });
    expect(refreshed.status).toBe(200);
    const password = await c.request('PUT', '/api/auth/password', {
      token: refreshed.body.access_token,
      body: { current_password: PASSWORD, new_password: 'ivan has a new pass phrase' },
    });
    expect(password.status).toBe(200);
    expect((await c.request('POST', '/api/auth/logout', { token: refreshed.body.access_token })).status).toBe(200);
  });
});

describe('GET /api/admin/roles', () => {
  it('lists the built-in roles with their permissions', async () => {
    const res = await c.request('GET', '/api/admin/roles', { token: orgAdmin.token });
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.roles.map((r: { name: string }) => [r.name, r]));
    expect(Object.keys(byName)).toEqual(expect.arrayContaining(['platform_admin', 'org_admin', 'operator', 'auditor']));
    expect(byName.platform_admin.permissions).toContain('platform.admin');
    expect(byName.operator.permissions).toEqual(['devices.access', 'ssh.certificate']);
    expect(byName.auditor.permissions).not.toContain('ssh.certificate');
    for (const role of res.body.roles) expect(typeof role.description).toBe('string');
  });
});
