import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';

/** Snapshot definitions, reads, deletes and their plain-text errors (collection: collect.test.ts). */
let c: TestController;
let u: InventoryUser;
let other: InventoryUser;

beforeAll(async () => {
  c = await startTestController();
  u = await inventoryUser(c);
  other = await inventoryUser(c);
});
afterAll(async () => c?.close());

describe('POST /api/devices/snapshots', () => {
  it('creates a pending snapshot with its filter', async () => {
    const site = await u.site();
    const res = await u.as('POST', '/api/devices/snapshots', {
      body: { name: 'nightly core', device_filter: { site_id: site.id, device_type: 'vendor_ios' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.snapshot).toMatchObject({
      name: 'nightly core',
      device_filter: { site_id: site.id, device_type: 'vendor_ios' },
      status: 'pending',
      total_devices: 0,
      successful_devices: 0,
      failed_devices: 0,
      method: 'cli',
      created_by_name: u.username,
    });
    expect(res.body.snapshot.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('takes an omitted filter as every device', async () => {
    const res = await u.as('POST', '/api/devices/snapshots', { body: { name: 'all' } });
    expect(res.status).toBe(201);
    expect(res.body.snapshot.device_filter).toEqual({});
  });

  it('answers bad input with 400 in plain text', async () => {
    const cases: unknown[] = [
      {},
      { name: '' },
      { name: 5 },
      { name: 'x', device_filter: { site_id: 'nope' } },
      { name: 'x', device_filter: { vendor: 'a' } },
      { name: 'x', extra: true },
      { name: 'x', device_filter: { site_id: randomUUID() } },
    ];
    for (const body of cases) {
      const res = await u.as('POST', '/api/devices/snapshots', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(res.text.length).toBeGreaterThan(0);
      expect(() => JSON.parse(res.text)).toThrow();
    }
    const malformed = await u.as('POST', '/api/devices/snapshots', { raw: '{"name":', contentType: 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toContain('text/plain');
  });

  it('refuses a site of another organization', async () => {
    const theirs = await other.site();
    const res = await u.as('POST', '/api/devices/snapshots', { body: { name: 'x', device_filter: { site_id: theirs.id } } });
    expect(res.status).toBe(400);
    expect(res.text).toContain('not found');
  });
});

describe('GET /api/devices/snapshots and /:id', () => {
  it("lists the organization's snapshots, newest first, with total", async () => {
    const a = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'list-a' } })).body.snapshot;
    const b = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'list-b' } })).body.snapshot;
    const res = await u.as('GET', '/api/devices/snapshots');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(res.body.snapshots.length);
    const ids = res.body.snapshots.map((s: any) => s.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
  });

  it('reads one snapshot', async () => {
    const created = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'one' } })).body.snapshot;
    const res = await u.as('GET', `/api/devices/snapshots/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body.snapshot).toMatchObject({ id: created.id, name: 'one', status: 'pending' });
  });

  it('answers a missing snapshot with 404 "Snapshot not found" in plain text, a bad id with 400', async () => {
    const res = await u.as('GET', `/api/devices/snapshots/${randomUUID()}`);
    expect(res.status).toBe(404);
    expect(res.text).toBe('Snapshot not found');
    expect(res.headers.get('content-type')).toContain('text/plain');
    const bad = await u.as('GET', '/api/devices/snapshots/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('text/plain');
  });

  it('lists no backups for a snapshot never collected', async () => {
    const created = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'empty' } })).body.snapshot;
    const res = await u.as('GET', `/api/devices/snapshots/${created.id}/backups`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ backups: [], total: 0 });
  });
});

describe('DELETE /api/devices/snapshots/:id', () => {
  it('deletes with 204, then 404', async () => {
    const created = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'gone' } })).body.snapshot;
    const res = await u.as('DELETE', `/api/devices/snapshots/${created.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const again = await u.as('DELETE', `/api/devices/snapshots/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.text).toBe('Snapshot not found');
  });
});

describe('another organization', () => {
  it('gets 404 "Snapshot not found" on every :id route and sees nothing in the list', async () => {
    const mine = (await u.as('POST', '/api/devices/snapshots', { body: { name: 'private' } })).body.snapshot;
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `/api/devices/snapshots/${mine.id}`],
      ['DELETE', `/api/devices/snapshots/${mine.id}`],
      ['POST', `/api/devices/snapshots/${mine.id}/collect`, {}],
      ['POST', `/api/devices/snapshots/${mine.id}/recollect-failed`, {}],
      ['GET', `/api/devices/snapshots/${mine.id}/backups`],
    ];
    for (const [method, path, body] of routes) {
      const res = await other.as(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.text).toBe('Snapshot not found');
    }
    const list = await other.as('GET', '/api/devices/snapshots');
    expect(list.body.snapshots.map((s: any) => s.id)).not.toContain(mine.id);
    expect((await u.as('GET', `/api/devices/snapshots/${mine.id}`)).status).toBe(200);
  });

  it('a caller without a token gets 401 in plain text', async () => {
    const res = await c.request('GET', '/api/devices/snapshots');
    expect(res.status).toBe(401);
    expect(res.text).toBe('Authentication required');
  });
});
