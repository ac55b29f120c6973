import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

/** A fresh user with `count` sessions, each from its own user agent. */
async function userWithSessions(count: number) {
  const user = await c.createOrgUser(['operator']);
  const pairs = [];
  for (let i = 0; i < count; i++) {
    const res = await c.request('POST', '/api/auth/login', {
      body: { username: user.username, password: user.password },
      headers: { 'user-agent': `agent-${i}` },
    });
    pairs.push(res.body as { access_token: string; refresh_token: string });
  }
  return { user, pairs };
}

const sessionsOf = (token: string) => c.request('GET', '/api/auth/sessions', { token });
const me = (token: string) => c.request('GET', '/api/auth/me', { token });

describe('GET /api/auth/sessions', () => {
  it("lists the caller's active sessions with user_agent and ip_address", async () => {
    const { pairs } = await userWithSessions(2);
    const res = await sessionsOf(pairs[1].access_token);
    expect(res.status).toBe(200);
    // The createOrgUser login plus the two above.
    expect(res.body.sessions).toHaveLength(3);
    const current = res.body.sessions.filter((s: { current: boolean }) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0]).toMatchObject({ user_agent: 'agent-1', ip_address: '127.0.0.1' });
    for (const session of res.body.sessions) {
      for (const field of ['id', 'created_at', 'expires_at', 'user_agent', 'ip_address']) expect(session).toHaveProperty(field);
      expect(new Date(session.expires_at).getTime()).toBeGreaterThan(Date.now());
    }
    expect(res.body.sessions.map((s: { user_agent: string }) => s.user_agent)).toContain('agent-0');
  });

  it('needs a token', async () => {
    const res = await c.request('GET', '/api/auth/sessions');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Authentication required');
  });
});

describe('session checks of parallel requests', () => {
  it('answers each request by its own session, though the checks of the moment share one statement', async () => {
    const a = await userWithSessions(2);
    const b = await userWithSessions(1);
    const list = await sessionsOf(a.pairs[1].access_token);
    const revoked = list.body.sessions.find((s: { user_agent: string }) => s.user_agent === 'agent-0');
    expect((await c.request('DELETE', `/api/auth/sessions/${revoked.id}`, { token: a.pairs[1].access_token })).status).toBe(200);
    const tokens = [a.pairs[0].access_token, a.pairs[1].access_token, b.pairs[0].access_token, 'not-a-token'];
    // Called in one turn of the event loop, these checks are read together.
    const checks = await Promise.all([...tokens, ...tokens].map((t) => c.services.auth.authenticate(t)));
    expect(checks.map((auth) => auth?.username ?? null)).toEqual([
      null,
      a.user.username,
      b.user.username,
      null,
      null,
      a.user.username,
      b.user.username,
      null,
    ]);
    expect(checks[2]?.orgId).not.toBe(checks[1]?.orgId);
    const answers = await Promise.all([...tokens, ...tokens].map((t) => me(t)));
    expect(answers.map((r) => r.status)).toEqual([401, 200, 200, 401, 401, 200, 200, 401]);
    expect(answers.map((r) => r.body.username ?? null)).toEqual(checks.map((auth) => auth?.username ?? null));
  });
});

describe('DELETE /api/auth/sessions/:id', () => {
  it('revokes one session: its access and refresh tokens die at once, the others live', async () => {
    const { pairs } = await userWithSessions(2);
    const list = await sessionsOf(pairs[1].access_token);
    const target = list.body.sessions.find((s: { user_agent: string }) => s.user_agent === 'agent-0');
    const res = await c.request('DELETE', `/api/auth/sessions/${target.id}`, { token: pairs[1].access_token });
    expect(res.status).toBe(200);
    expect(res.body.message).toBeTruthy();
    expect((await me(pairs[0].access_token)).status).toBe(401);
    expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: pairs[0].refresh_token } })).status).toBe(401);
    expect((await me(pairs[1].access_token)).status).toBe(200);
    const after = await sessionsOf(pairs[1].access_token);
    expect(after.body.sessions.map((s: { id: string }) => s.id)).not.toContain(target.id);
  });

  it("answers 404 for another user's session and leaves it alive", async () => {
    const a = await userWithSessions(1);
    const b = await userWithSessions(1);
    const bSessions = await sessionsOf(b.pairs[0].access_token);
    const res = await c.request('DELETE', `/api/auth/sessions/${bSessions.body.sessions[0].id}`, { token: a.pairs[0].access_token });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Session not found');
    expect((await me(b.pairs[0].access_token)).status).toBe(200);
  });

  it('answers 404 for an unknown session and 400 naming a bad id', async () => {
    const { pairs } = await userWithSessions(1);
    const unknown = await c.request('DELETE', `/api/auth/sessions/${randomUUID()}`, { token: pairs[0].access_token });
    expect(unknown.status).toBe(404);
    const bad = await c.request('DELETE', '/api/auth/sessions/not-a-uuid', { token: pairs[0].access_token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('params.id must be a UUID');
  });
});

describe('DELETE /api/auth/sessions/other', () => {
  it('revokes every session but the current one', async () => {
    const { pairs } = await userWithSessions(3);
    const res = await c.request('DELETE', '/api/auth/sessions/other', { token: pairs[2].access_token });
    expect(res.status).toBe(200);
    expect(res.body.sessions_revoked).toBe(3);
    for (const pair of pairs.slice(0, 2)) expect((await me(pair.access_token)).status).toBe(401);
    expect((await me(pairs[2].access_token)).status).toBe(200);
    expect((await sessionsOf(pairs[2].access_token)).body.sessions).toHaveLength(1);
  });
});

describe('POST /api/auth/logout', () => {
  it('revokes every session of the user and answers {message, sessions_revoked}', async () => {
    const { user, pairs } = await userWithSessions(2);
    const res = await c.request('POST', '/api/auth/logout', { token: pairs[0].access_token });
    expect(res.status).toBe(200);
    expect(typeof res.body.message).toBe('string');
    expect(res.body.sessions_revoked).toBe(3);
    expect(Object.keys(res.body).sort()).toEqual(['message', 'sessions_revoked']);
    for (const pair of pairs) {
      expect((await me(pair.access_token)).status).toBe(401);
      expect((await c.request('POST', '/api/auth/refresh', { body: { refresh_token: pair.refresh_token } })).status).toBe(401);
    }
    expect((await me(user.token)).status).toBe(401);
  });

  it('records auth.logout in the audit log of the organization', async () => {
    const { user, pairs } = await userWithSessions(1);
    await c.request('POST', '/api/auth/logout', { token: pairs[0].access_token });
    const admin = await c.request('POST', '/api/auth/switch-org', { token: c.adminToken, body: { org_id: user.orgId } });
    const audit = await c.request('GET', `/api/admin/audit?kind=auth.logout&user_id=${user.userId}`, { token: admin.body.access_token });
    expect(audit.status).toBe(200);
    expect(audit.body.total).toBe(1);
    expect(audit.body.entries[0]).toMatchObject({
      kind: 'auth.logout',
      user_id: user.userId,
      username: user.username,
      org_id: user.orgId,
      ip_address: '127.0.0.1',
    });
    expect(audit.body.entries[0].details.sessions_revoked).toBe(2);
  });

  it('accepts an empty JSON body', async () => {
    const { pairs } = await userWithSessions(1);
    const res = await c.request('POST', '/api/auth/logout', { token: pairs[0].access_token, raw: '', contentType: 'application/json' });
    expect(res.status).toBe(200);
  });

  it('needs a token', async () => {
    const res = await c.request('POST', '/api/auth/logout');
    expect(res.status).toBe(401);
  });
});
