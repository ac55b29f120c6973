import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../controller/src/config';
import { enterpriseSettingsFromEnv } from '../../controller/src/auth/ldap-oidc-env';
import { ADMIN, startTestController, type TestController } from '../helpers/controller';
import { LDAP_SERVICE, freePort, startSlapd, type SlapdServer } from '../helpers/slapd';

const ALICE = { uid: 'alice', password: 'alice-ldap-pw', mail: 'alice@example.test', cn: 'Alice Liddell' };
const BOB = { uid: 'bob', password: 'bob-ldap-pw', ou: 'staff' };
// Filter metacharacters in a real uid: escaping must still find exactly this entry.
const ODD = { uid: 'odd(name)*', password: 'odd-ldap-pw' };
const CAROL = { uid: 'carol', password: 'carol-ldap-pw' };
const DORA = { uid: 'dora', password: 'dora-ldap-pw' };
// A directory entry with a system account's name.
const WWW = { uid: 'www-data', password: 'www-data-ldap-pw' };

let slapd: SlapdServer;
let c: TestController;

/** StartTLS against the test slapd, trusting its CA, searching as the read-only service account. */
function ldapSettings(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'ldap.url': slapd.url,
    'ldap.bind_dn': LDAP_SERVICE.dn,
    'ldap.bind_password': LDAP_SERVICE.password,
    'ldap.base_dn': slapd.baseDn,
    'ldap.user_filter': '(uid={username})',
    'ldap.start_tls': true,
    'ldap.ca_certificate': slapd.caPem,
    'ldap.timeout_seconds': 5,
    ...overrides,
  };
}

async function configure(values: Record<string, unknown>): Promise<void> {
  const res = await c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: values } });
  expect(res.status, res.text).toBe(200);
}

const ldapLogin = (username: string, password: string, extra: Record<string, unknown> = {}) =>
  c.request('POST', '/api/auth/ldap', { body: { username, password, ...extra } });

const failedLogins = async () => Number((await c.db('failed_logins').count({ n: '*' }))[0].n);

beforeAll(async () => {
  slapd = await startSlapd();
  await slapd.addUsers([ALICE, BOB, ODD, CAROL, DORA, WWW]);
  c = await startTestController({
    settings: { 'security.rate_limit.requests_per_minute': 100000, 'security.rate_limit.failed_login_limit': 1000 },
  });
});
afterAll(async () => {
  await c?.close();
  await slapd?.close();
});
afterEach(async () => {
  await c.db('failed_logins').delete();
});

describe('LDAP not configured', () => {
  it('lists ldap as a disabled provider and answers 400 on /ldap', async () => {
    const providers = await c.request('GET', '/api/auth/providers');
    expect(providers.body.providers).toEqual(
      expect.arrayContaining([
        { name: 'local', enabled: true },
        { name: 'ldap', enabled: false },
      ]),
    );
    const res = await ldapLogin('alice', ALICE.password);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'LDAP_NOT_CONFIGURED' });
    expect(res.body.error).toMatch(/ldap\.url/);
  });

  it('/ldap/test says what is missing', async () => {
    const res = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false });
    expect(res.body.message).toMatch(/not configured/);
  });
});

describe('POST /api/auth/ldap against slapd (StartTLS, service account)', () => {
  beforeAll(async () => configure(ldapSettings()));

  it('shows ldap enabled in /providers and keeps the bind password write-only', async () => {
    const providers = await c.request('GET', '/api/auth/providers');
    expect(providers.body.providers).toContainEqual({ name: 'ldap', enabled: true });
    const settings = await c.request('GET', '/api/admin/settings', { token: c.adminToken });
    expect(settings.body.settings['has_ldap.bind_password']).toBe(true);
    expect(settings.text).not.toContain(LDAP_SERVICE.password);
  });

  it('/ldap/test reports a working service bind', async () => {
    const res = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, tls: 'starttls', bind_dn: LDAP_SERVICE.dn, base_dn: slapd.baseDn, warnings: [] });
    expect(res.body.message).toContain('Bound as');
  });

  it('/ldap/test needs a signed-in caller', async () => {
    const res = await c.request('POST', '/api/auth/ldap/test');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Authentication required');
  });

  it('returns the same token pair as /login and creates a role-less user in the default organization', async () => {
    const res = await ldapLogin('alice', ALICE.password);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(res.body.refresh_token).toHaveLength(64);
    expect(res.body).not.toHaveProperty('ssh_certificate');
    const me = await c.request('GET', '/api/auth/me', { token: res.body.access_token });
    const defaultOrg = await c.db('organizations').where({ is_default: true }).first('id');
    expect(me.body).toMatchObject({
      username: 'alice',
      auth_provider: 'ldap',
      roles: [],
      permissions: [],
      email: ALICE.mail,
      display_name: ALICE.cn,
      org_id: defaultOrg.id,
      home_org_id: defaultOrg.id,
      is_platform_admin: false,
    });
    const row = await c.db('users').where({ username: 'alice' }).first('password_hash', 'external_id');
    expect(row).toEqual({ password_hash: null, external_id: `uid=alice,ou=people,${slapd.baseDn}` });
  });

  it('the role-less user can use /api/auth/* but nothing else until given a role', async () => {
    const { body } = await ldapLogin('alice', ALICE.password);
    const token = body.access_token;
    expect((await c.request('GET', '/api/auth/sessions', { token })).status).toBe(200);
    for (const path of ['/api/admin/users', '/api/admin/settings', '/api/devices', '/api/sites', '/api/profiles']) {
      const res = await c.request('GET', path, { token });
      expect(res.status, path).toBe(403);
      expect(res.body.error).toBe('Insufficient permissions');
    }
    const refreshed = await c.request('POST', '/api/auth/refresh', { body: { refresh_token: body.refresh_token } });
    expect(refreshed.status).toBe(200);

    // An administrator grants a role: the same token can now list devices.
    const user = await c.db('users').where({ username: 'alice' }).first('id');
    const granted = await c.request('PUT', `/api/admin/users/${user.id}/roles`, { token: c.adminToken, body: { roles: ['operator'] } });
    expect(granted.status, granted.text).toBe(200);
    expect((await c.request('GET', '/api/devices', { token })).status).toBe(200);
    expect((await c.request('GET', '/api/admin/users', { token })).status).toBe(403);
  });

  it('finds the same user again on the next sign-in, whatever the case typed', async () => {
    const before = await c.db('users').where({ auth_provider: 'ldap' }).count({ n: '*' });
    const res = await ldapLogin('ALICE', ALICE.password);
    expect(res.status).toBe(200);
    const me = await c.request('GET', '/api/auth/me', { token: res.body.access_token });
    expect(me.body.username).toBe('alice');
    expect(me.body.roles).toEqual(['operator']);
    expect(await c.db('users').where({ auth_provider: 'ldap' }).count({ n: '*' })).toEqual(before);
  });

  it('finds users anywhere under the base DN', async () => {
    const res = await ldapLogin('bob', BOB.password);
    expect(res.status, res.text).toBe(200);
  });

  it('answers 401 Invalid credentials for a wrong password and counts it toward the lockout', async () => {
    const res = await ldapLogin('alice', 'not-her-password');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_CREDENTIALS');
    expect(res.body.error).toMatch(/^Invalid credentials/);
    expect(typeof res.body.attempts_remaining).toBe('number');
    expect(await failedLogins()).toBe(1);
  });

  it('answers 401 Invalid credentials for an unknown user', async () => {
    const res = await ldapLogin('mallory', 'whatever-password');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_CREDENTIALS');
    expect(await failedLogins()).toBe(1);
    expect(await c.db('users').where({ username: 'mallory' }).first()).toBeUndefined();
  });

  it('escapes filter values: wildcards and injected filters match nothing', async () => {
    for (const username of ['al*', '*', '*)(uid=*', 'alice)(|(uid=*', '*)(|(objectClass=*']) {
      const res = await ldapLogin(username, ALICE.password);
      expect(res.status, username).toBe(401);
      expect(res.body.code).toBe('INVALID_CREDENTIALS');
    }
    const odd = await ldapLogin(ODD.uid, ODD.password);
    expect(odd.status, odd.text).toBe(200);
    const me = await c.request('GET', '/api/auth/me', { token: odd.body.access_token });
    expect(me.body.username).toBe(ODD.uid);
  });

  it('an LDAP account sent to /login gets 401 Invalid credentials', async () => {
    const res = await c.login('alice', ALICE.password);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/^Invalid credentials/);
  });

  it('never takes over a local account with the same username (409)', async () => {
    const created = await c.request('POST', '/api/admin/users', {
      token: c.adminToken,
      body: { username: 'carol', password: 'a-long-local-password-1' },
    });
    expect(created.status, created.text).toBe(201);
    const res = await ldapLogin('carol', CAROL.password);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('EXTERNAL_USERNAME_CONFLICT');
    expect(res.body.error).toContain('local account');
    expect((await c.login('carol', 'a-long-local-password-1')).status).toBe(200);
  });

  it("refuses a first sign-in under a system account's name (400 RESERVED_USERNAME): no user, no failed login", async () => {
    const before = await failedLogins();
    const res = await ldapLogin('www-data', WWW.password);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('RESERVED_USERNAME');
    expect(res.body.error).toMatch(/^Sign-in refused: the username 'www-data' from LDAP is the name of a system account/);
    expect(await c.db('users').where({ username: 'www-data' }).first()).toBeUndefined();
    expect(await failedLogins()).toBe(before);
    // A wrong password is still just a wrong password: nothing about the name is told.
    expect((await ldapLogin('www-data', 'not-the-password')).status).toBe(401);
  });

  it('refuses a disabled LDAP user like a wrong password', async () => {
    expect((await ldapLogin('dora', DORA.password)).status).toBe(200);
    const user = await c.db('users').where({ username: 'dora' }).first('id');
    const disabled = await c.request('PUT', `/api/admin/users/${user.id}`, { token: c.adminToken, body: { is_active: false } });
    expect(disabled.status, disabled.text).toBe(200);
    const res = await ldapLogin('dora', DORA.password);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('client_type terminal takes a license seat like /login, once the user has a role', async () => {
    await configure({ 'licenses.terminal_seats': 1 });
    try {
      await c.db('sessions').where({ client_type: 'terminal' }).update({ revoked_at: new Date() });
      // Provisioned role-less, they take no seat (403) until an administrator gives them a role.
      expect((await ldapLogin('bob', BOB.password, { client_type: 'terminal' })).status).toBe(403);
      for (const username of ['bob', 'alice']) {
        const { id } = await c.db('users').where({ username }).first('id');
        const granted = await c.request('PUT', `/api/admin/users/${id}/roles`, { token: c.adminToken, body: { roles: ['operator'] } });
        expect(granted.status, granted.text).toBe(200);
      }
      const first = await ldapLogin('bob', BOB.password, { client_type: 'terminal' });
      expect(first.status, first.text).toBe(200);
      const second = await ldapLogin('alice', ALICE.password, { client_type: 'terminal' });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatch(/^seat_limit_reached/);
      await c.request('POST', '/api/auth/logout', { token: first.body.access_token });
      expect((await ldapLogin('alice', ALICE.password, { client_type: 'terminal' })).status).toBe(200);
    } finally {
      await configure({ 'licenses.terminal_seats': 5 });
    }
  });

  it('refuses unknown body fields and empty passwords with 400', async () => {
    expect((await c.request('POST', '/api/auth/ldap', { body: { username: 'alice', password: ALICE.password, extra: 1 } })).status).toBe(400);
    const empty = await c.request('POST', '/api/auth/ldap', { body: { username: 'alice', password: '' } });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain('password');
  });

  it('locks the client out after the failed-login limit, LDAP failures included', async () => {
    // Rate limit settings take effect after the API restarts (API.md).
    await configure({ 'security.rate_limit.failed_login_limit': 3 });
    await c.restart();
    try {
      for (let i = 0; i < 3; i += 1) expect((await ldapLogin('alice', `wrong-${i}`)).status).toBe(401);
      const locked = await ldapLogin('alice', ALICE.password);
      expect(locked.status).toBe(429);
      expect(locked.body.error).toBe('Too many failed login attempts. Please try again later.');
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await c.login(ADMIN.username, ADMIN.password)).status).toBe(429);
    } finally {
      await c.db('failed_logins').delete();
      await configure({ 'security.rate_limit.failed_login_limit': 1000 });
      await c.restart();
    }
  });

  it('never logs or stores the passwords in clear', async () => {
    const logs = c.logs();
    for (const secret of [LDAP_SERVICE.password, ALICE.password, BOB.password]) expect(logs).not.toContain(secret);
    const stored = await c.db('settings').where({ key: 'ldap.bind_password' }).first('value');
    expect(JSON.stringify(stored.value)).not.toContain(LDAP_SERVICE.password);
  });
});

describe('TLS choices', () => {
  afterAll(async () => configure(ldapSettings()));

  it('ldaps:// with the CA works', async () => {
    await configure(ldapSettings({ 'ldap.url': slapd.ldapsUrl, 'ldap.start_tls': false }));
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.body).toMatchObject({ ok: true, tls: 'ldaps' });
    expect((await ldapLogin('bob', BOB.password)).status).toBe(200);
  });

  it('ldaps:// without trusting the CA is a 503 that says to set ldap.ca_certificate', async () => {
    await configure(ldapSettings({ 'ldap.url': slapd.ldapsUrl, 'ldap.start_tls': false, 'ldap.ca_certificate': '' }));
    const res = await ldapLogin('bob', BOB.password);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('LDAP_UNAVAILABLE');
    expect(res.body.error).toContain('ldap.ca_certificate');
    expect(await failedLogins()).toBe(0);
  });

  it('plain ldap:// works but /ldap/test warns that passwords travel unencrypted', async () => {
    await configure(ldapSettings({ 'ldap.start_tls': false }));
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.body).toMatchObject({ ok: true, tls: 'none' });
    expect(test.body.warnings.join(' ')).toMatch(/unencrypted/);
    expect((await ldapLogin('bob', BOB.password)).status).toBe(200);
  });
});

describe('server trouble is a clear 503, not a hang, and not a failed login', () => {
  afterAll(async () => configure(ldapSettings()));

  it('a wrong service password: /ldap/test says so, /ldap answers 503 LDAP_MISCONFIGURED', async () => {
    await configure(ldapSettings({ 'ldap.bind_password': 'not-the-reader-password' }));
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.body.ok).toBe(false);
    expect(test.body.message).toMatch(/service bind as 'cn=reader.*' was refused: invalid credentials/);
    const res = await ldapLogin('alice', ALICE.password);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('LDAP_MISCONFIGURED');
    expect(res.body.error).not.toContain('not-the-reader-password');
    expect(await failedLogins()).toBe(0);
  });

  it('a base DN that does not exist', async () => {
    await configure(ldapSettings({ 'ldap.base_dn': 'dc=nowhere,dc=test' }));
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.body).toMatchObject({ ok: false });
    expect(test.body.message).toContain("'dc=nowhere,dc=test' does not exist");
    const res = await ldapLogin('alice', ALICE.password);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('LDAP_MISCONFIGURED');
  });

  it('nothing listening: 503 connection refused', async () => {
    const port = await freePort();
    await configure(ldapSettings({ 'ldap.url': `ldap://127.0.0.1:${port}`, 'ldap.start_tls': false }));
    const res = await ldapLogin('alice', ALICE.password);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'LDAP_UNAVAILABLE' });
    expect(res.body.error).toBe(`Cannot reach the LDAP server at ldap://127.0.0.1:${port}: connection refused`);
    const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
    expect(test.body).toMatchObject({ ok: false, message: res.body.error });
    expect(await failedLogins()).toBe(0);
  });

  it('a server that accepts the connection and never answers: 503 after ldap.timeout_seconds', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      await configure(ldapSettings({ 'ldap.url': `ldap://127.0.0.1:${port}`, 'ldap.start_tls': false, 'ldap.timeout_seconds': 1 }));
      const res = await ldapLogin('alice', ALICE.password);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('LDAP_UNAVAILABLE');
      expect(res.body.error).toContain('did not answer within 1 s');
      const test = await c.request('POST', '/api/auth/ldap/test', { token: c.adminToken });
      expect(test.body.ok).toBe(false);
      expect(test.body.message).toContain('did not answer within 1 s');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('settings from the environment', () => {
  it('maps SWITCHBOARD_LDAP_* to settings and names a bad variable', () => {
    expect(
      enterpriseSettingsFromEnv({
        SWITCHBOARD_LDAP_URL: 'ldaps://ldap.example.com',
        SWITCHBOARD_LDAP_BIND_DN: 'cn=reader,dc=example,dc=com',
        SWITCHBOARD_LDAP_BIND_PASSWORD: 'pw',
        SWITCHBOARD_LDAP_BASE_DN: 'dc=example,dc=com',
        SWITCHBOARD_LDAP_USER_FILTER: '(sAMAccountName={username})',
        SWITCHBOARD_LDAP_START_TLS: 'false',
      }),
    ).toEqual({
      'ldap.url': 'ldaps://ldap.example.com',
      'ldap.bind_dn': 'cn=reader,dc=example,dc=com',
      'ldap.bind_password': 'pw',
      'ldap.base_dn': 'dc=example,dc=com',
      'ldap.user_filter': '(sAMAccountName={username})',
      'ldap.start_tls': false,
    });
    expect(() => enterpriseSettingsFromEnv({ SWITCHBOARD_LDAP_URL: 'http://ldap.example.com' })).toThrow(ConfigError);
    expect(() => enterpriseSettingsFromEnv({ SWITCHBOARD_LDAP_USER_FILTER: '(uid=*)' })).toThrow(/SWITCHBOARD_LDAP_USER_FILTER/);
    expect(() => enterpriseSettingsFromEnv({ SWITCHBOARD_LDAP_CA_FILE: '/nonexistent/ca.pem' })).toThrow(
      /SWITCHBOARD_LDAP_CA_FILE names a file that cannot be read/,
    );
  });

  it('seeds the settings on start (a controller started with SWITCHBOARD_LDAP_* signs LDAP users in)', async () => {
    const env = {
      SWITCHBOARD_LDAP_URL: slapd.url,
      SWITCHBOARD_LDAP_BIND_DN: LDAP_SERVICE.dn,
      SWITCHBOARD_LDAP_BIND_PASSWORD: LDAP_SERVICE.password,
      SWITCHBOARD_LDAP_BASE_DN: slapd.baseDn,
    };
    Object.assign(process.env, env);
    let other: TestController | undefined;
    try {
      other = await startTestController();
      const providers = await other.request('GET', '/api/auth/providers');
      expect(providers.body.providers).toContainEqual({ name: 'ldap', enabled: true });
      const res = await other.request('POST', '/api/auth/ldap', { body: { username: 'bob', password: BOB.password } });
      expect(res.status, res.text).toBe(200);
      // Seeding never overwrites what an administrator changed.
      await other.request('PUT', '/api/admin/settings', {
        token: other.adminToken,
        body: { settings: { 'ldap.base_dn': `ou=people,${slapd.baseDn}` } },
      });
      await other.restart();
      const settings = await other.request('GET', '/api/admin/settings', { token: other.adminToken });
      expect(settings.body.settings['ldap.base_dn']).toBe(`ou=people,${slapd.baseDn}`);
    } finally {
      for (const key of Object.keys(env)) delete process.env[key];
      await other?.close();
    }
  });
});
