import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { api } from '../deployments/helpers';
import './use-pglite'; // PGlite's longer time limits; each describe names its database itself

/**
 * DELETE answers on both databases: PGlite once answered a result object instead of a count,
 * so a delete of another organization's row (or of nothing) answered 204 with an audit entry,
 * and a delete of one's own row answered 404 with none. Each database gets one controller.
 */
describe.each(['postgres', 'pglite'] as const)('DELETE on %s', (database) => {
  let c: TestController;
  let me: { token: string; userId: string };
  let mine: string;
  let theirs: string;
  /** Path of each of the first organization's rows, in an order that deletes dependants first. */
  const rows: { path: string; kind: string }[] = [];

  const deleteAudits = async () => (await c.db('audit_log').where('kind', 'like', '%deleted').count<{ n: number }[]>({ n: '*' }))[0].n;

  beforeAll(async () => {
    c = await startTestController({ database });
    me = await c.createOrgUser(['org_admin']);
    mine = me.token;
    theirs = (await c.createOrgUser(['org_admin'])).token;
    const make = (path: string, body: unknown) => api(c, mine, 'POST', path, body, 201);
    const profile = await make('/api/profiles', { name: 'p', username: 'admin', password: 'admin', automation_transport: 'gnmi' });
    const device = await make('/api/devices', { name: 'r1', host: '192.0.2.1', device_type: 'vendor_eos', profile_id: profile.id });
    const source = await make('/api/devices/sources/netbox', { name: 'nb', url: 'http://192.0.2.10', token: 'netbox-token' });
    const template = await make('/api/config/templates', {
      name: 't',
      platform: 'openconfig-gnmi',
      config_format: 'json',
      target_path: '/system',
      source: '{"hostname": "{{ hostname }}"}',
    });
    const stack = await make('/api/config/stacks', { name: 's', services: [{ template_id: template.id, variables: { hostname: 'r1' } }] });
    const instance = await make('/api/config/instances', { stack_id: stack.id, name: 'nightly', target_devices: [{ device_id: device.id }] });
    const snapshot = (await make('/api/devices/snapshots', { name: 'weekly' })).snapshot;
    const task = await make('/api/tasks', { name: 'weekly snapshot', type: 'snapshot', cron: '0 3 * * 1', snapshot_id: snapshot.id });
    rows.push(
      { path: `/api/tasks/${task.id}`, kind: 'task.deleted' },
      { path: `/api/config/instances/${instance.id}`, kind: 'instance.deleted' },
      { path: `/api/config/stacks/${stack.id}`, kind: 'stack.deleted' },
      { path: `/api/config/templates/${template.id}`, kind: 'template.deleted' },
      { path: `/api/devices/snapshots/${snapshot.id}`, kind: 'snapshot.deleted' },
      { path: `/api/devices/sources/netbox/${source.id}`, kind: 'netbox.source_deleted' },
      { path: `/api/devices/${device.id}`, kind: 'device.deleted' },
      { path: `/api/profiles/${profile.id}`, kind: 'profile.deleted' },
    );
  });
  afterAll(async () => c?.close());

  it('runs on the database it names', () => {
    expect(c.config.databaseUrl === null).toBe(database === 'pglite');
  });

  it('another organization, or an id that exists nowhere, gets 404 and writes no audit entry', async () => {
    const before = await deleteAudits();
    for (const { path } of rows) {
      expect((await c.request('DELETE', path, { token: theirs })).status, path).toBe(404);
      const nowhere = path.replace(/[0-9a-f-]{36}$/, randomUUID());
      expect((await c.request('DELETE', nowhere, { token: mine })).status, nowhere).toBe(404);
      expect((await c.request('GET', path, { token: mine })).status, path).toBe(200);
    }
    expect(await deleteAudits()).toBe(before);
  });

  it('deleting one’s own row answers 204, removes it, and records who did it', async () => {
    for (const { path, kind } of rows) {
      const before = await deleteAudits();
      expect((await c.request('DELETE', path, { token: mine })).status, path).toBe(204);
      expect((await c.request('GET', path, { token: mine })).status, path).toBe(404);
      expect((await c.request('DELETE', path, { token: mine })).status, path).toBe(404);
      const entry = await c.db('audit_log').where({ kind }).orderBy('created_at', 'desc').first();
      expect(entry, kind).toMatchObject({ user_id: me.userId });
      expect(JSON.stringify(entry.details), kind).toContain(path.split('/').pop());
      expect(await deleteAudits(), kind).toBe(before + 1);
    }
  });
});
