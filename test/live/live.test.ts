import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import type { TestController } from '../helpers/controller';
import { api, gnmiStackFixture, until, waitFor } from '../deployments/helpers';
import { connect } from './helpers';

let f: Awaited<ReturnType<typeof gnmiStackFixture>>;
let c: TestController;
let org: Org;
let device: any;
let stack: any;

beforeAll(async () => {
  f = await gnmiStackFixture({ hostname: 'a', deviceName: 'live1' });
  ({ c, org, device, stack } = f);
});
afterAll(() => f?.close());

/** A one-device deployment of the fixture's stack, run to its end. */
async function deployed(name: string) {
  const created = await api(
    c,
    org.token,
    'POST',
    '/api/config/deployments',
    { stack_id: stack.id, name, target_devices: [{ device_id: device.id }] },
    201,
  );
  await waitFor(c, org.token, created.id);
  return created;
}

describe('GET /api/live', () => {
  it('streams deployment status changes, device states and log lines of the organization as they happen', async () => {
    const client = await connect(c);
    client.send({ type: 'auth', token: org.token });
    expect(await client.next((e) => e.type === 'ready', 'ready')).toMatchObject({ org_id: org.orgId });
    const other = await c.createOrgUser(['operator']);
    const stranger = await connect(c, { authorization: `Bearer ${other.token}` });
    await stranger.next((e) => e.type === 'ready', 'ready (header auth)');

    const created = await deployed('live');
    const completed = await client.next((e) => e.type === 'deployment' && e.id === created.id && e.status === 'completed', 'completed event');
    expect(completed).toMatchObject({ name: 'live', total_devices: 1, succeeded_count: 1, failed_count: 0 });
    expect(completed).not.toHaveProperty('org_id');
    const statuses = client.events.filter((e) => e.type === 'deployment' && e.id === created.id).map((e) => e.status);
    expect(statuses).toEqual(expect.arrayContaining(['pending', 'in_progress', 'completed']));
    expect(statuses.indexOf('pending')).toBeLessThan(statuses.indexOf('completed'));
    await client.next((e) => e.type === 'deployment_device' && e.device_id === device.id && e.status === 'completed', 'device completed');
    const logs = client.events.filter((e) => e.type === 'deployment_log' && e.deployment_id === created.id);
    expect(logs.map((l) => l.message).join('\n')).toMatch(/Deployment created[\s\S]*Deployment completed/);
    expect(logs[0]).toMatchObject({ level: 'info', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    // Times read as the REST answers give them.
    const rest = await api(c, org.token, 'GET', `/api/config/deployments/${created.id}`, undefined, 200);
    expect(completed.completed_at).toBe(rest.completed_at);
    expect(logs.some((l) => l.device_id === device.id)).toBe(true);

    // The other organization heard nothing of it.
    expect(stranger.events.filter((e) => e.type !== 'ready')).toEqual([]);
    client.close();
    stranger.close();
  });

  it('narrows to the deployments asked for', async () => {
    const client = await connect(c, { authorization: `Bearer ${org.token}` });
    await client.next((e) => e.type === 'ready', 'ready');
    client.send({ type: 'subscribe', deployments: ['00000000-0000-4000-8000-000000000000'], types: ['deployment'] });
    await client.next((e) => e.type === 'subscribed', 'subscribed');
    await deployed('quiet');
    client.send({ type: 'ping' });
    await client.next((e) => e.type === 'pong', 'pong');
    expect(client.events.filter((e) => !['ready', 'subscribed', 'pong'].includes(e.type))).toEqual([]);
    client.close();
  });

  it('streams every line of a statement that writes many long ones, in order, cut to 1,000 characters', async () => {
    const client = await connect(c, { authorization: `Bearer ${org.token}` });
    await client.next((e) => e.type === 'ready', 'ready');
    const created = await deployed('many lines');
    // One statement, 150 lines: plain, multibyte and control characters (6 bytes each in JSON), each
    // far longer than a notification could hold in one piece with its neighbours.
    const bodies = ['plain '.repeat(300), 'é'.repeat(1_800), '\u0001'.repeat(1_500), 'short'];
    const rows = Array.from({ length: 150 }, (_, i) => ({
      deployment_id: created.id,
      org_id: org.orgId,
      level: 'info',
      message: `${i}:${bodies[i % bodies.length]}`,
    }));
    const inserted: { id: string }[] = await c.db('deployment_logs').insert(rows).returning('id');
    await client.next((e) => e.type === 'deployment_log' && String(e.id) === String(inserted[149].id), 'the last line');
    const ids = new Set(inserted.map((r) => String(r.id)));
    const heard = client.events.filter((e) => e.type === 'deployment_log' && ids.has(String(e.id)));
    expect(heard.map((e) => e.message)).toEqual(rows.map((r) => r.message.slice(0, 1_000)));
    expect(heard[1].message).toBe(`1:${'é'.repeat(998)}`);
    client.close();
  });

  it('streams snapshot status changes', async () => {
    const client = await connect(c, { authorization: `Bearer ${org.token}` });
    await client.next((e) => e.type === 'ready', 'ready');
    const snapshot = (await api(c, org.token, 'POST', '/api/devices/snapshots', { name: 'live snap' }, 201)).snapshot;
    expect(await client.next((e) => e.type === 'snapshot' && e.id === snapshot.id, 'snapshot event')).toMatchObject({
      name: 'live snap',
      status: expect.any(String),
    });
    client.close();
  });

  describe('only while someone watches (migration 188)', () => {
    const watchers = async () => Number((await c.db('live_watchers').count({ n: '*' }))[0].n);
    const noWatcher = () => until('no live watcher left', async () => (await watchers()) === 0, 10_000, 20);
    let deploymentId: string;
    const line = async (message: string, q = c.db) =>
      String((await q('deployment_logs').insert({ deployment_id: deploymentId, org_id: org.orgId, level: 'info', message }).returning('id'))[0].id);

    beforeAll(async () => {
      deploymentId = (await deployed('watched')).id;
    });

    it('sends log lines only while a client is connected, and forgets the watcher when the last one leaves', async () => {
      await noWatcher();
      const listener = new pg.Client({ connectionString: c.app.services.config.databaseUrl! });
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (m) => heard.push(m.payload ?? ''));
      await listener.query('LISTEN sb_live');
      try {
        await line('a line nobody watches');
        // Notifications arrive in commit order: once this marker is heard, the line's would have been.
        await c.db.raw("SELECT pg_notify('sb_live', 'marker')");
        await until('the marker', () => heard.includes('marker'));
        expect(heard.filter((p) => p.includes('a line nobody watches'))).toEqual([]);

        const client = await connect(c, { authorization: `Bearer ${org.token}` });
        try {
          await client.next((e) => e.type === 'ready', 'ready');
          expect(await watchers()).toBe(1);
          const id = await line('a line someone watches');
          expect(await client.next((e) => e.type === 'deployment_log' && String(e.id) === id, 'the watched line')).toMatchObject({
            message: 'a line someone watches',
          });
          // The same notification reaches this connection too, on its own time.
          await until('the line on the LISTEN connection', () => heard.some((p) => p.includes('a line someone watches')));
        } finally {
          client.close();
        }
        await noWatcher();
      } finally {
        await listener.end();
      }
    });

    it('tells a new client ready only once the transactions that wrote before it watched have committed', async () => {
      await noWatcher();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      const older = c.db.transaction(async (trx) => {
        await line('written before the watch', trx);
        wrote();
        await held;
      });
      await written;
      const client = await connect(c, { authorization: `Bearer ${org.token}` });
      try {
        await until('the watcher row', async () => (await watchers()) === 1, 10_000, 20);
        // Its triggers ran before the row existed and sent nothing: ready must wait for its commit.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(client.events.filter((e) => e.type === 'ready')).toEqual([]);
      } finally {
        release();
        await older;
      }
      try {
        await client.next((e) => e.type === 'ready', 'ready');
        const logs = await api(c, org.token, 'GET', `/api/config/deployments/${deploymentId}/logs?limit=1000`);
        expect(logs.logs.map((l: { message: string }) => l.message)).toContain('written before the watch');
      } finally {
        client.close();
      }
    });

    /** A connection that sends auth twice at once, or a header and then an auth message: a racing client. */
    const authenticatedTwice = async (header: boolean) => {
      const client = await connect(c, header ? { authorization: `Bearer ${org.token}` } : undefined);
      if (!header) client.send({ type: 'auth', token: org.token });
      client.send({ type: 'auth', token: org.token });
      await client.next((e) => e.type === 'ready', 'ready');
      return client;
    };

    it.each([
      ['two auth messages back to back', false],
      ['an Authorization header and an auth message', true],
    ])('authenticates once after %s: one ready, the extra auth refused, each event once', async (_, header) => {
      const client = await authenticatedTwice(header);
      try {
        expect(await client.next((e) => e.type === 'error', 'the extra auth refused')).toEqual({
          type: 'error',
          error: 'Authentication already sent: a connection authenticates once',
        });
        const id = await line('a line heard once');
        await client.next((e) => e.type === 'deployment_log' && String(e.id) === id, 'the line');
        // A second listener would have sent its copy before this pong: both run in one delivery.
        client.send({ type: 'ping' });
        await client.next((e) => e.type === 'pong', 'pong');
        expect(client.events.filter((e) => e.type === 'ready')).toHaveLength(1);
        expect(client.events.filter((e) => e.type === 'deployment_log' && String(e.id) === id)).toHaveLength(1);
      } finally {
        client.close();
      }
    });

    it('keeps no subscription, access watcher or watcher row once connections that authenticated twice close', async () => {
      await noWatcher();
      const clients = await Promise.all([false, true, false, true, false, false].map((header) => authenticatedTwice(header)));
      expect(await watchers()).toBe(1);
      for (const client of clients) client.close();
      await Promise.all(clients.map((client) => client.closed));
      await noWatcher();
      expect(c.services.live.subscribers).toBe(0);
      // A leaked access check would run recheck for a closed connection forever.
      expect(c.services.live.accessWatchers).toBe(0);
    });
  });

  it('closes with 4401 for a bad token or a client that does not authenticate first, 4403 without devices.access', async () => {
    const bad = await connect(c);
    bad.send({ type: 'auth', token: 'not-a-token' });
    expect(await bad.closed).toMatchObject({ code: 4401, reason: 'Invalid or expired token' });
    const rude = await connect(c);
    rude.send({ type: 'subscribe' });
    expect((await rude.closed).code).toBe(4401);
    const garbage = await connect(c);
    garbage.send('{not json' as unknown as object);
    const auditor = await c.createOrgUser(['auditor']);
    const denied = await connect(c, { authorization: `Bearer ${auditor.token}` });
    expect(await denied.closed).toMatchObject({ code: 4403, reason: 'Insufficient permissions' });
    garbage.close();
  });

  it('answers a message that is not a JSON object with an error, and keeps the connection', async () => {
    const client = await connect(c);
    // JSON null once threw out of the message handler: an uncaught exception, fatal to the process.
    for (const text of ['null', '5', '"auth"', '{not json']) client.raw(text);
    await until('four errors', () => client.events.filter((e) => e.type === 'error').length === 4, 10_000, 20);
    expect(new Set(client.events.map((e) => e.error))).toEqual(new Set(['Messages are JSON objects']));
    client.send({ type: 'auth', token: org.token });
    await client.next((e) => e.type === 'ready', 'ready');
    client.close();
  });
});
