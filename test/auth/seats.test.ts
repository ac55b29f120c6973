import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController({ settings: { 'security.rate_limit.requests_per_minute': 100000 } });
});
afterAll(async () => c?.close());

const setSeats = (seats: number, perOrg: number | null = null) =>
  c.request('PUT', '/api/admin/settings', {
    token: c.adminToken,
    body: { settings: { 'licenses.terminal_seats': seats, 'licenses.terminal_seats_per_org': perOrg } },
  });

const terminal = (user: { username: string; password: string }) => c.login(user.username, user.password, { client_type: 'terminal' });

/** Live terminal sessions, whoever holds them. */
const terminalSessions = () => c.db('sessions').where({ client_type: 'terminal' }).whereNull('revoked_at').where('expires_at', '>', c.db.fn.now());

/** Another user in the organization of `admin` (an org_admin from createOrgUser). */
async function colleague(admin: { token: string }, roles: string[] = ['operator']) {
  const username = `user-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const created = await c.request('POST', '/api/admin/users', { token: admin.token, body: { username, password, roles } });
  expect(created.status, created.text).toBe(201);
  return { username, password, userId: created.body.id as string };
}

beforeEach(async () => {
  // Every test starts with every seat free.
  await c.db('sessions').where({ client_type: 'terminal' }).whereNull('revoked_at').update({ revoked_at: c.db.fn.now() });
});

describe('terminal license seats', () => {
  it('refuses a terminal login with no free seat (409 seat_limit_reached) and logout frees the seat', async () => {
    expect((await setSeats(1)).status).toBe(200);
    const a = await c.createOrgUser(['operator']);
    const b = await c.createOrgUser(['operator']);

    const first = await terminal(a);
    expect(first.status).toBe(200);

    const second = await terminal(b);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatch(/^seat_limit_reached/);
    expect(second.body.code).toBe('SEAT_LIMIT_REACHED');

    // Browser and script logins take no seat.
    expect((await c.login(b.username, b.password)).status).toBe(200);
    expect((await c.login(b.username, b.password, { client_type: 'admin_ui' })).status).toBe(200);

    const logout = await c.request('POST', '/api/auth/logout', { token: first.body.access_token });
    expect(logout.status).toBe(200);
    const third = await terminal(b);
    expect(third.status).toBe(200);
  });

  it('an account without a role takes no seat: its terminal login is refused (403), its browser login works', async () => {
    expect((await setSeats(1)).status).toBe(200);
    const admin = await c.createOrgUser(['org_admin']);
    const idle = await colleague(admin, []);
    const refused = await terminal(idle);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'FORBIDDEN', error: expect.stringContaining('has no role yet') });
    expect(await terminalSessions()).toHaveLength(0);
    expect((await c.login(idle.username, idle.password)).status).toBe(200);
    expect((await terminal(await colleague(admin))).status).toBe(200);
  });

  it('frees a seat when the terminal session is revoked or expires', async () => {
    expect((await setSeats(1)).status).toBe(200);
    const holder = await c.createOrgUser(['operator']);
    const waiting = await c.createOrgUser(['operator']);
    expect((await terminal(holder)).status).toBe(200);
    expect((await terminal(waiting)).status).toBe(409);
    await c
      .db('sessions')
      .where({ client_type: 'terminal', user_id: holder.userId })
      .whereNull('revoked_at')
      .update({ expires_at: c.db.raw("now() - interval '1 second'") });
    const next = await terminal(waiting);
    expect(next.status).toBe(200);
    await c.db('sessions').where({ client_type: 'terminal', user_id: waiting.userId }).update({ revoked_at: c.db.fn.now() });
    expect((await terminal(holder)).status).toBe(200);
  });

  it("a disabled user's terminal session holds no seat, even one left unrevoked", async () => {
    expect((await setSeats(1)).status).toBe(200);
    const holder = await c.createOrgUser(['operator']);
    const waiting = await c.createOrgUser(['operator']);
    expect((await terminal(holder)).status).toBe(200);
    expect((await terminal(waiting)).status).toBe(409);
    // Disabled behind the service's back: the session row stays as it was.
    await c.db('users').where({ id: holder.userId }).update({ is_active: false });
    expect((await terminal(waiting)).status).toBe(200);
  });

  it('gives out exactly the number of seats when logins of different users race', async () => {
    expect((await setSeats(3)).status).toBe(200);
    const users = await Promise.all(Array.from({ length: 8 }, () => c.createOrgUser(['operator'])));
    const answers = await Promise.all(users.map((user) => terminal(user)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(5);
    expect(await terminalSessions()).toHaveLength(3);
  });

  it('with zero seats refuses every terminal login', async () => {
    expect((await setSeats(0)).status).toBe(200);
    const user = await c.createOrgUser(['operator']);
    const res = await terminal(user);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/^seat_limit_reached/);
  });
});

describe('one terminal seat per user', () => {
  it("a new terminal login replaces the same user's earlier terminal session: its tokens stop working and the seat is reused", async () => {
    expect((await setSeats(1)).status).toBe(200);
    const user = await c.createOrgUser(['operator']);
    const browser = await c.login(user.username, user.password);
    const first = await terminal(user);
    expect(first.status).toBe(200);
    // Every seat is taken, by this user: signing in again from a terminal still works.
    const second = await terminal(user);
    expect(second.status, second.text).toBe(200);

    expect((await c.request('GET', '/api/auth/me', { token: first.body.access_token })).status).toBe(401);
    expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: first.body.refresh_token } })).status).toBe(401);
    expect((await c.request('GET', '/api/auth/me', { token: second.body.access_token })).status).toBe(200);
    // Other kinds of session are left alone.
    expect((await c.request('GET', '/api/auth/me', { token: browser.body.access_token })).status).toBe(200);

    const revoked = await c
      .db('sessions')
      .where({ user_id: user.userId, client_type: 'terminal' })
      .whereNotNull('revoked_at')
      .first('revoked_reason');
    expect(revoked.revoked_reason).toBe('replaced by a new terminal login');
    expect(await terminalSessions()).toHaveLength(1);
    const audit = await c.request('GET', `/api/admin/audit?kind=auth.login&user_id=${user.userId}&all=true`, { token: c.adminToken });
    expect(audit.body.entries[0].details).toMatchObject({ client_type: 'terminal', replaced_sessions: 1 });
  });

  it('one user logging in from a terminal many times at once ends with one session holding one seat', async () => {
    expect((await setSeats(2)).status).toBe(200);
    const user = await c.createOrgUser(['operator']);
    const answers = await Promise.all(Array.from({ length: 6 }, () => terminal(user)));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(await terminalSessions()).toHaveLength(1);
    const other = await c.createOrgUser(['operator']);
    expect((await terminal(other)).status).toBe(200);
  });

  it('the audit finding: an organization user logging in five times no longer takes every seat from another organization', async () => {
    expect((await setSeats(5)).status).toBe(200);
    const auditorB = await c.createOrgUser(['auditor']);
    for (let i = 0; i < 5; i += 1) expect((await terminal(auditorB)).status).toBe(200);
    const adminA = await c.createOrgUser(['org_admin']);
    expect((await terminal(adminA)).status).toBe(200);
    expect(await terminalSessions()).toHaveLength(2);
  });

  it("a refused terminal login leaves the user's current terminal session alone", async () => {
    expect((await setSeats(1)).status).toBe(200);
    const holder = await c.createOrgUser(['operator']);
    const held = await terminal(holder);
    expect(held.status).toBe(200);
    await setSeats(0);
    expect((await terminal(holder)).status).toBe(409);
    expect((await c.request('GET', '/api/auth/me', { token: held.body.access_token })).status).toBe(200);
  });

  it("revokes the replaced session's SSH certificate (it goes on the key revocation list)", async () => {
    expect((await setSeats(1)).status).toBe(200);
    const scratch = mkdtempSync(join(tmpdir(), 'sb-seat-key-'));
    try {
      execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(scratch, 'k')]);
      const publicKey = readFileSync(join(scratch, 'k.pub'), 'utf8').trim();
      const user = await c.createOrgUser(['operator']);
      const first = await c.login(user.username, user.password, { client_type: 'terminal', public_key: publicKey });
      expect(first.status, first.text).toBe(200);
      expect(first.body.ssh_certificate).toBeTruthy();
      const before = await c.db('ssh_certificates').where({ user_id: user.userId }).first('revoked_at');
      expect(before.revoked_at).toBeNull();
      expect((await terminal(user)).status).toBe(200);
      const after = await c.db('ssh_certificates').where({ user_id: user.userId }).first('revoked_at');
      expect(after.revoked_at).not.toBeNull();
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe('licenses.terminal_seats_per_org', () => {
  it('caps the seats the users of one organization hold; other organizations still get the free ones', async () => {
    expect((await setSeats(3, 1)).status).toBe(200);
    const adminB = await c.createOrgUser(['org_admin']);
    const userB = await colleague(adminB);
    expect((await terminal(adminB)).status).toBe(200);
    const refused = await terminal(userB);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('SEAT_LIMIT_REACHED');
    expect(refused.body.error).toMatch(/^seat_limit_reached: your organization uses all 1 of its terminal license seats/);
    // The same user signing in again reuses its own seat.
    expect((await terminal(adminB)).status).toBe(200);

    const adminA = await c.createOrgUser(['org_admin']);
    expect((await terminal(adminA)).status).toBe(200);

    // Without a share, the organization may take any free seat again.
    expect((await setSeats(3, null)).status).toBe(200);
    expect((await terminal(userB)).status).toBe(200);
    expect(await terminalSessions()).toHaveLength(3);
  });

  it('the total still applies when an organization is under its share', async () => {
    expect((await setSeats(1, 5)).status).toBe(200);
    const a = await c.createOrgUser(['operator']);
    const b = await c.createOrgUser(['operator']);
    expect((await terminal(a)).status).toBe(200);
    const refused = await terminal(b);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/^seat_limit_reached: all 1 terminal license seats are in use/);
  });

  it('is platform-wide: an organization administrator cannot raise it, and bad values are 400', async () => {
    const orgAdmin = await c.createOrgUser(['org_admin']);
    const own = await c.request('PUT', '/api/admin/settings', {
      token: orgAdmin.token,
      body: { settings: { 'licenses.terminal_seats_per_org': 100 } },
    });
    expect(own.status).toBe(403);
    for (const value of [-1, 1.5, '2', 100001]) {
      const res = await c.request('PUT', '/api/admin/settings', {
        token: c.adminToken,
        body: { settings: { 'licenses.terminal_seats_per_org': value } },
      });
      expect(res.status, JSON.stringify(value)).toBe(400);
    }
    const settings = await c.request('GET', '/api/admin/settings', { token: c.adminToken });
    expect(settings.body.settings).toHaveProperty(['licenses.terminal_seats_per_org']);
  });
});
