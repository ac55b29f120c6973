import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../agents/helpers';
import type { TestController } from '../helpers/controller';
import { api, gnmiStackFixture, until, waitFor } from '../deployments/helpers';

// ws ships no type definitions here: the few members used are typed below.
interface Ws {
  on(event: 'message', cb: (data: Buffer) => void): void;
  on(event: 'close', cb: (code: number, reason: Buffer) => void): void;
  on(event: 'open' | 'error', cb: (arg?: unknown) => void): void;
  send(data: string): void;
  close(): void;
}
const WebSocket = createRequire(import.meta.url)('ws') as new (url: string, options?: { headers?: Record<string, string> }) => Ws;

interface Client {
  events: any[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  next(match: (event: any) => boolean, what: string): Promise<any>;
  close(): void;
}

function connect(c: TestController, headers?: Record<string, string>): Promise<Client> {
  const ws = new WebSocket(`${c.url.replace('http', 'ws')}/api/live`, headers ? { headers } : undefined);
  const events: any[] = [];
  ws.on('message', (data) => events.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        events,
        closed,
        send: (message) => ws.send(JSON.stringify(message)),
        next: (match, what) => until(what, () => events.find(match), 30_000, 20),
        close: () => ws.close(),
      }),
    );
  });
}

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

describe('GET /api/live', () => {
  it('streams deployment status changes, device states and log lines of the organization as they happen', async () => {
    const client = await connect(c);
    client.send({ type: 'auth', token: org.token });
    expect(await client.next((e) => e.type === 'ready', 'ready')).toMatchObject({ org_id: org.orgId });
    const other = await c.createOrgUser(['operator']);
    const stranger = await connect(c, { authorization: `Bearer ${other.token}` });
    await stranger.next((e) => e.type === 'ready', 'ready (header auth)');

    const created = await api(
      c,
      org.token,
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: 'live', target_devices: [{ device_id: device.id }] },
      201,
    );
    await waitFor(c, org.token, created.id);
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
    const created = await api(
      c,
      org.token,
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: 'quiet', target_devices: [{ device_id: device.id }] },
      201,
    );
    await waitFor(c, org.token, created.id);
    client.send({ type: 'ping' });
    await client.next((e) => e.type === 'pong', 'pong');
    expect(client.events.filter((e) => !['ready', 'subscribed', 'pong'].includes(e.type))).toEqual([]);
    client.close();
  });

  it('streams every line of a statement that writes many long ones, in order, cut to 1,000 characters', async () => {
    const client = await connect(c, { authorization: `Bearer ${org.token}` });
    await client.next((e) => e.type === 'ready', 'ready');
    const created = await api(
      c,
      org.token,
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: 'many lines', target_devices: [{ device_id: device.id }] },
      201,
    );
    await waitFor(c, org.token, created.id);
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
});
