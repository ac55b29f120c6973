/**
 * `npm start` (controller/src/start.ts) as a real process: the controller plus a built-in agent
 * in each organization's default pool, reached in-process without NATS_URL and over NATS with
 * it. A config pull goes all the way through the built-in agent; an organization created while
 * running gets its own within seconds and pulls through it; after a restart both agents keep
 * their identities. The first case is exactly `npm ci && npm start`: no DATABASE_URL, no NATS_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/postgres';
import { freePort } from '../helpers/net';
import { spawnTs, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, apiClient, dropNatsNamespace, makeDevice, until } from './helpers';

let sim: SimSshDevice;
beforeAll(async () => {
  sim = await startSshDevice({ hostname: 'aio-1', password: 'aio-pw' });
});
afterAll(async () => sim?.close());

describe.each([
  { transport: 'in-process', database: 'embedded PGlite' },
  { transport: 'in-process', database: 'PostgreSQL' },
  { transport: 'nats', database: 'PostgreSQL' },
])('npm start with the built-in agent ($transport, $database)', ({ transport, database: kind }) => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-aio-'));
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let env: Record<string, string>;
  const procs: Proc[] = [];

  beforeAll(async () => {
    if (kind === 'PostgreSQL') database = await createTestDatabase();
    env = {
      ...(kind === 'PostgreSQL' ? { DATABASE_URL: database.url } : {}),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      SWITCHBOARD_DATA_DIR: dataDir,
      SWITCHBOARD_ADMIN_PASSWORD: 'aio-admin-password-1',
      LOG_LEVEL: 'warn',
      ...(transport === 'nats' ? { NATS_URL: SHARED_NATS, SWITCHBOARD_NATS_PREFIX: prefix } : {}),
    };
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill('SIGKILL')));
    await database?.drop();
    if (transport === 'nats') await dropNatsNamespace(SHARED_NATS, prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('pulls a config through the built-in agent and keeps the agent across a restart', { timeout: 240_000 }, async () => {
    const api = apiClient(`http://127.0.0.1:${env.PORT}`);
    const start = async () => {
      const p = spawnTs('controller/src/start.ts', env);
      procs.push(p);
      await until(
        'the controller to answer',
        async () => {
          if (p.child.exitCode !== null) throw new Error(`npm start exited: ${p.output()}`);
          return (await api.request('GET', '/api/auth/providers')).status === 200;
        },
        90_000,
        200,
      );
      return p;
    };
    const first = await start();
    const token = (await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'aio-admin-password-1' } })).body.access_token;
    const builtin = await until(
      'the built-in agent to be online',
      async () => {
        const list = await api.request('GET', '/api/agents', { token });
        return list.body.agents.find((a: any) => a.builtin && a.status === 'online');
      },
      60_000,
    );
    expect(builtin).toMatchObject({
      name: 'built-in',
      site_id: null,
      pool: 'default',
      enrolled: true,
      capabilities: expect.arrayContaining(['job:backup', 'transport:ssh']),
    });
    expect(statSync(join(dataDir, 'agent', 'identity.json')).mode & 0o777).toBe(0o600);

    const me = await api.request('GET', '/api/auth/me', { token });
    const deviceId = await makeDevice(api, { orgId: me.body.org_id, token }, { port: sim.port, password: 'aio-pw', name: 'aio-device' });
    const check = await api.request('POST', `/api/devices/${deviceId}/test-credential`, { token });
    expect(check.status, check.text).toBe(200);
    expect(check.body).toMatchObject({ success: true });
    const pull = await api.request('POST', `/api/config/devices/${deviceId}/pull?method=cli`, { token });
    expect(pull.status, pull.text).toBe(201);
    const latest = await api.request('GET', `/api/config/devices/${deviceId}/configs/latest`, { token });
    expect(latest.status).toBe(200);
    expect(latest.body.config_text).toContain('hostname aio-1');

    // An organization created while running gets a built-in agent of its own, which runs its jobs.
    const org = await api.request('POST', '/api/admin/organizations', { token, body: { name: 'aio-second' } });
    expect(org.status, org.text).toBe(201);
    const token2 = (await api.request('POST', '/api/auth/switch-org', { token, body: { org_id: org.body.id } })).body.access_token;
    const builtinOf = async (t: string) => (await api.request('GET', '/api/agents', { token: t })).body.agents.filter((a: any) => a.builtin);
    const second = await until(
      "the second organization's built-in agent",
      async () => (await builtinOf(token2)).find((a: any) => a.status === 'online'),
      60_000,
    );
    expect(second).toMatchObject({ name: 'built-in', site_id: null, pool: 'default' });
    expect(second.id).not.toBe(builtin.id);
    expect(statSync(join(dataDir, 'agent', 'orgs', org.body.id, 'identity.json')).mode & 0o777).toBe(0o600);
    const deviceId2 = await makeDevice(api, { orgId: org.body.id, token: token2 }, { port: sim.port, password: 'aio-pw', name: 'aio-device-2' });
    const pull2 = await api.request('POST', `/api/config/devices/${deviceId2}/pull?method=cli`, { token: token2 });
    expect(pull2.status, pull2.text).toBe(201);
    expect((await builtinOf(token)).map((a: any) => a.id)).toEqual([builtin.id]); // each organization sees its own

    expect(await first.kill('SIGTERM')).toBe(0);
    await start();
    const back = async (t: string) =>
      until(
        'the built-in agents to be back',
        async () => {
          const agents = await builtinOf(t);
          return agents.length === 1 && agents[0].status === 'online' ? agents[0] : null;
        },
        60_000,
      );
    const again = await back(token);
    expect(again.id).toBe(builtin.id);
    expect(again.completed_jobs).toBeGreaterThanOrEqual(2);
    expect((await back(token2)).id).toBe(second.id);
  });
});
