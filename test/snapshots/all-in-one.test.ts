/**
 * Backups the way a new user first meets them: `npm start` as a real process with no
 * DATABASE_URL and no NATS_URL — embedded PostgreSQL (PGlite, a single connection, so any query
 * outside its transaction would deadlock) and the built-in agent reached in-process — pulling
 * from and snapshotting SSH simulators.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { spawnTs, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';

const ADMIN_PASSWORD = 'all-in-one-admin-pw';
const DEVICE_PASSWORD = 'all-in-one-device-pw';

let child: Proc;
let base: string;
let token: string;
let dataDir: string;
const sims: SimSshDevice[] = [];

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sb-all-in-one-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // node with the tsx loader on a clean environment (no DATABASE_URL, no NATS_URL): npm start as a new user runs it.
  child = spawnTs('controller/src/start.ts', {
    PORT: String(port),
    SWITCHBOARD_DATA_DIR: dataDir,
    SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOG_LEVEL: 'warn',
  });
  for (let i = 1; i <= 2; i++) sims.push(await startSshDevice({ hostname: `lab-${i}`, username: 'netops', password: DEVICE_PASSWORD }));
  await until(
    'npm start to answer',
    async () => {
      if (!child.running) throw new Error(`npm start exited: ${child.output()}`);
      return (await fetch(`${base}/api/auth/providers`).catch(() => null))?.ok;
    },
    240_000,
    500,
  );
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  token = ((await login.json()) as { access_token: string }).access_token;
}, 300_000);

afterAll(async () => {
  await child?.kill();
  await Promise.all(sims.map((s) => s.close()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start (PGlite, built-in agent)', () => {
  it('pulls, diffs, collects a snapshot and bulk-pulls', async () => {
    const ids: string[] = [];
    for (const sim of sims) {
      const profile = await api('POST', '/api/profiles', {
        name: `p-${sim.hostname}`,
        username: 'netops',
        password: DEVICE_PASSWORD,
        ssh_port: sim.port,
      });
      const device = await api('POST', '/api/devices', {
        name: sim.hostname,
        host: sim.host,
        device_type: 'vendor_ios',
        profile_id: profile.body.id,
      });
      expect(device.status, device.text).toBe(201);
      ids.push(device.body.id);
    }
    for (let i = 0; i < 2; i++) expect((await api('POST', `/api/config/devices/${ids[0]}/pull?method=cli`)).status).toBe(201);
    const diff = await api('GET', `/api/config/devices/${ids[0]}/diff-versions?old_version=1&new_version=2`);
    expect(diff.body).toMatchObject({ identical: true });

    const snap = await api('POST', '/api/devices/snapshots', { name: 'lab' });
    const collect = await api('POST', `/api/devices/snapshots/${snap.body.snapshot.id}/collect`);
    expect(collect.status, collect.text).toBe(202);
    expect(collect.body.devices_queued).toBe(2);
    const done = await until(
      'the snapshot to finish',
      async () => {
        const s = (await api('GET', `/api/devices/snapshots/${snap.body.snapshot.id}`)).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      60_000,
    );
    expect(done).toMatchObject({ status: 'completed', successful_devices: 2, failed_devices: 0 });

    const bulk = await api('POST', '/api/config/devices/bulk-pull', { device_ids: ids, method: 'cli' });
    expect(bulk.status, bulk.text).toBe(202);
    const bulkDone = await until(
      'the bulk pull to finish',
      async () => {
        const s = (await api('GET', `/api/devices/snapshots/${bulk.body.snapshot_id}`)).body.snapshot;
        return s.status === 'collecting' ? null : s;
      },
      60_000,
    );
    expect(bulkDone).toMatchObject({ status: 'completed', successful_devices: 2 });
    expect((await api('GET', `/api/config/devices/${ids[1]}/configs`)).body.total).toBe(2);
    expect(child.output()).not.toMatch(/"level":50/);
  });
});
