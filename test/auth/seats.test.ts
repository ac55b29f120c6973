import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';

let c: TestController;
beforeAll(async () => {
  c = await startTestController();
});
afterAll(async () => c?.close());

const setSeats = (seats: number) =>
  c.request('PUT', '/api/admin/settings', { token: c.adminToken, body: { settings: { 'licenses.terminal_seats': seats } } });

describe('terminal license seats', () => {
  it('refuses a terminal login with no free seat (409 seat_limit_reached) and logout frees the seat', async () => {
    expect((await setSeats(1)).status).toBe(200);
    const a = await c.createOrgUser(['operator']);
    const b = await c.createOrgUser(['operator']);

    const first = await c.login(a.username, a.password, { client_type: 'terminal' });
    expect(first.status).toBe(200);

    const second = await c.login(b.username, b.password, { client_type: 'terminal' });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatch(/^seat_limit_reached/);
    expect(second.body.code).toBe('SEAT_LIMIT_REACHED');

    // Browser and script logins take no seat.
    expect((await c.login(b.username, b.password)).status).toBe(200);
    expect((await c.login(b.username, b.password, { client_type: 'admin_ui' })).status).toBe(200);

    const logout = await c.request('POST', '/api/auth/logout', { token: first.body.access_token });
    expect(logout.status).toBe(200);
    const third = await c.login(b.username, b.password, { client_type: 'terminal' });
    expect(third.status).toBe(200);
  });

  it('frees a seat when the terminal session is revoked or expires', async () => {
    expect((await setSeats(1)).status).toBe(200);
    await c.db('sessions').where({ client_type: 'terminal' }).update({ revoked_at: c.db.fn.now() });
    const user = await c.createOrgUser(['operator']);
    const holder = await c.login(user.username, user.password, { client_type: 'terminal' });
    expect(holder.status).toBe(200);
    expect((await c.login(user.username, user.password, { client_type: 'terminal' })).status).toBe(409);
    await c
      .db('sessions')
      .where({ client_type: 'terminal' })
      .whereNull('revoked_at')
      .update({ expires_at: c.db.raw("now() - interval '1 second'") });
    expect((await c.login(user.username, user.password, { client_type: 'terminal' })).status).toBe(200);
  });

  it('gives out exactly the number of seats when logins race', async () => {
    expect((await setSeats(3)).status).toBe(200);
    await c.db('sessions').where({ client_type: 'terminal' }).update({ revoked_at: c.db.fn.now() });
    const user = await c.createOrgUser(['operator']);
    const answers = await Promise.all(Array.from({ length: 8 }, () => c.login(user.username, user.password, { client_type: 'terminal' })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(5);
  });

  it('with zero seats refuses every terminal login', async () => {
    expect((await setSeats(0)).status).toBe(200);
    const user = await c.createOrgUser(['operator']);
    const res = await c.login(user.username, user.password, { client_type: 'terminal' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/^seat_limit_reached/);
  });
});
