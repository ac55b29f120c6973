/**
 * /api/live stays open only while its caller may have it: a connection closes with 4403 when the
 * user loses devices.access and with 4401 when the session ends, at once when the change is
 * announced (on any replica), and at the periodic check when it is not.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../controller/src/app';
import { createLogger } from '../../controller/src/logger';
import { startTestController, type TestController } from '../helpers/controller';
import { LIVE_LIMITS, TOO_MANY_CODE } from '../../controller/src/live/connection-limits';
import { connect, watch } from './helpers';

let c: TestController;
let admin: Awaited<ReturnType<TestController['createOrgUser']>>;

beforeAll(async () => {
  c = await startTestController({ settings: { 'security.rate_limit.requests_per_minute': 100000 } });
  admin = await c.createOrgUser(['org_admin']);
});
afterAll(async () => c?.close());

/** An operator of the admin's organization, signed in. */
async function operator(): Promise<{ id: string; username: string; password: string; token: string }> {
  const username = `op-${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const created = await c.request('POST', '/api/admin/users', { token: admin.token, body: { username, password, roles: ['operator'] } });
  expect(created.status, created.text).toBe(201);
  const login = await c.login(username, password);
  return { id: created.body.id, username, password, token: login.body.access_token };
}

const setRoles = (id: string, roles: string[]) => c.request('PUT', `/api/admin/users/${id}/roles`, { token: admin.token, body: { roles } });

describe('/api/live after the caller loses access', () => {
  it("closes with 4403 as soon as an administrator takes devices.access away, and leaves other users' streams open", async () => {
    const user = await operator();
    const bystander = await operator();
    const live = await watch(c, user.token);
    const other = await watch(c, bystander.token);

    // A change that keeps devices.access keeps the stream.
    expect((await setRoles(user.id, ['operator', 'auditor'])).status).toBe(200);
    expect(await live.answers()).toBe(true);

    expect((await setRoles(user.id, ['auditor'])).status).toBe(200);
    expect(await live.closed).toEqual({ code: 4403, reason: 'Insufficient permissions' });
    expect(live.events.at(-1)).toEqual({ type: 'error', error: 'Insufficient permissions' });
    // Someone else's change is no reason to close this one.
    expect(await other.answers()).toBe(true);
    other.close();

    // With the role back, the same token streams again.
    expect((await setRoles(user.id, ['operator'])).status).toBe(200);
    const again = await watch(c, user.token);
    expect(await again.answers()).toBe(true);
    again.close();
  });

  it('closes with 4401 at once when the user is disabled, logs out, or has the session revoked', async () => {
    const disabled = await operator();
    const live = await watch(c, disabled.token);
    expect((await c.request('PUT', `/api/admin/users/${disabled.id}`, { token: admin.token, body: { is_active: false } })).status).toBe(200);
    expect(await live.closed).toEqual({ code: 4401, reason: 'Invalid or expired token' });

    const leaving = await operator();
    const browser = await watch(c, leaving.token);
    const second = await c.login(leaving.username, leaving.password);
    expect((await c.request('POST', '/api/auth/logout', { token: second.body.access_token })).status).toBe(200);
    expect((await browser.closed).code).toBe(4401);

    const revoked = await operator();
    const tab = await watch(c, revoked.token);
    const other = await c.login(revoked.username, revoked.password);
    expect((await c.request('DELETE', '/api/auth/sessions/other', { token: other.body.access_token })).status).toBe(200);
    expect((await tab.closed).code).toBe(4401);
  });

  it("closes the stream of a terminal session that the user's new terminal login replaced", async () => {
    const user = await operator();
    const first = await c.login(user.username, user.password, { client_type: 'terminal' });
    expect(first.status).toBe(200);
    const live = await watch(c, first.body.access_token);
    expect((await c.login(user.username, user.password, { client_type: 'terminal' })).status).toBe(200);
    expect((await live.closed).code).toBe(4401);
  });

  it('the periodic check re-reads permissions too: a change nobody announced closes the stream at the next check', async () => {
    const user = await operator();
    const live = await watch(c, user.token);
    // Behind the service's back: no announcement, so only the periodic check can see it.
    await c
      .db('users')
      .where({ id: user.id })
      .update({ roles: ['auditor'] });
    expect(await live.answers()).toBe(true);
    // What the RECHECK_MS timer runs for every connection.
    c.services.live.recheckAccess();
    expect(await live.closed).toEqual({ code: 4403, reason: 'Insufficient permissions' });
  });

  it('hears the change on another controller replica of the same database', async () => {
    const sink = new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    });
    const replica: FastifyInstance = await buildApp({ config: { ...c.config }, db: c.db, log: createLogger('info', sink) });
    await replica.listen({ port: 0, host: '127.0.0.1' });
    try {
      const replicaUrl = `http://127.0.0.1:${(replica.server.address() as { port: number }).port}`;
      const user = await operator();
      const live = await watch(c, user.token, replicaUrl);
      // The roles change on the first controller; the connection is on the replica.
      expect((await setRoles(user.id, [])).status).toBe(200);
      expect((await live.closed).code).toBe(4403);
    } finally {
      await replica.close();
    }
  });
});

describe('/api/live connections one client may hold', () => {
  it('refuses an address more connections waiting to authenticate than the limit, and takes one again once a place is free', async () => {
    const waiting = await Promise.all(Array.from({ length: LIVE_LIMITS.waitingPerAddress }, () => connect(c)));
    const over = await connect(c);
    expect(await over.closed).toEqual({ code: TOO_MANY_CODE, reason: expect.stringMatching(/^Too many live connections waiting to authenticate/) });
    // The waiting ones are still open and can authenticate; one that did frees its place.
    const user = await operator();
    waiting[0].send({ type: 'auth', token: user.token });
    await waiting[0].next((e) => e.type === 'ready', 'ready');
    const taken = await connect(c);
    taken.send({ type: 'auth', token: user.token });
    expect((await taken.next((e) => e.type === 'ready', 'ready')).username).toBe(user.username);
    for (const ws of [...waiting, taken]) ws.close();
  });

  it("refuses a user more streams than the limit, and leaves other users' streams alone", async () => {
    const [user, other] = [await operator(), await operator()];
    const streams = [];
    for (let i = 0; i < LIVE_LIMITS.streamsPerUser; i++) streams.push(await watch(c, user.token));
    const over = await connect(c);
    over.send({ type: 'auth', token: user.token });
    expect(await over.closed).toEqual({
      code: TOO_MANY_CODE,
      reason: `Too many live streams for this user (${LIVE_LIMITS.streamsPerUser}): close some first`,
    });
    const theirs = await watch(c, other.token);
    expect(await theirs.answers()).toBe(true);
    expect(await streams[0].answers()).toBe(true);
    // A stream closed gives its place back.
    streams[0].close();
    await streams[0].closed;
    streams.push(await watch(c, user.token));
    for (const live of [...streams, theirs]) live.close();
  });
});
