import { expect } from 'vitest';
import type { Db } from '../../controller/src/db/knex';
import { until } from '../agents/helpers';
import { readableKeyPair } from '../sim/ssh/device';
/** Helpers of the ops suites: Prometheus text parsing and polling. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition (0.0.4) into samples; HELP/TYPE lines are checked for shape. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) {
      if (line.startsWith('# ') && !/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples of one metric whose labels include `match`. */
export function metric(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

export function has(samples: Sample[], name: string, match: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

export { sleep, until } from '../agents/helpers';

// ---- talking to controller processes ------------------------------------------------------

export interface Api {
  request<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown }): Promise<{ status: number; body: T; text: string }>;
}

/** A small client of a controller at `base()` (a function: a replica may move or change). */
export function api(base: () => string): Api {
  return {
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(base() + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const text = await res.text();
      let body: any = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
      return { status: res.status, body, text };
    },
  };
}

async function ok<T = any>(res: Promise<{ status: number; body: any; text: string }>, status: number, what: string): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text}`);
  return r.body as T;
}

/** Signs in the bootstrap admin and makes an organization with an org_admin; answers that user's token. */
export async function orgAdmin(
  c: Api,
  adminPassword = 'bootstrap-admin-password',
): Promise<{ orgId: string; token: string; username: string; password: string }> {
  const admin = (await ok(c.request('POST', '/api/auth/login', { body: { username: 'admin', password: adminPassword } }), 200, 'admin login'))
    .access_token;
  const org = await ok(
    c.request('POST', '/api/admin/organizations', { token: admin, body: { name: `ops-${Math.random().toString(36).slice(2, 8)}` } }),
    201,
    'create organization',
  );
  const switched = await ok(c.request('POST', '/api/auth/switch-org', { token: admin, body: { org_id: org.id } }), 200, 'switch organization');
  const username = `ops-${Math.random().toString(36).slice(2, 8)}`;
  const password = `pw-${Math.random().toString(36).slice(2)}-Xy9`;
  await ok(
    c.request('POST', '/api/admin/users', { token: switched.access_token, body: { username, password, roles: ['org_admin'] } }),
    201,
    'create user',
  );
  const session = await ok(c.request('POST', '/api/auth/login', { body: { username, password } }), 200, 'user login');
  return { orgId: org.id, token: session.access_token, username, password };
}

/** A site, devices on the given simulators (one profile each), and an agent of the site with its enrollment token. */
export async function siteWithDevices(c: Api, token: string, sims: { host: string; port: number; hostname: string }[], password = 'admin') {
  const site = await ok(
    c.request('POST', '/api/sites', { token, body: { name: `site-${Math.random().toString(36).slice(2, 8)}` } }),
    201,
    'create site',
  );
  const deviceIds: string[] = [];
  for (const sim of sims) {
    const profile = await ok(
      c.request('POST', '/api/profiles', {
        token,
        body: { name: `p-${sim.hostname}-${Math.random().toString(36).slice(2, 6)}`, username: 'admin', password, ssh_port: sim.port },
      }),
      201,
      'create profile',
    );
    const device = await ok(
      c.request('POST', '/api/devices', {
        token,
        body: { name: sim.hostname, host: sim.host, device_type: 'vendor_ios', profile_id: profile.id, site_id: site.id },
      }),
      201,
      'create device',
    );
    deviceIds.push(device.id);
  }
  return { site, deviceIds };
}

export async function createAgent(c: Api, token: string, name: string, siteId: string | null): Promise<{ id: string; enrollment_token: string }> {
  return ok(c.request('POST', '/api/agents', { token, body: { name, site_id: siteId } }), 201, 'create agent');
}

/** Creates a snapshot of one site and starts collecting it; answers the snapshot id. */
export async function collectSite(c: Api, token: string, siteId: string, name: string, timeoutSeconds = 300): Promise<string> {
  const snap = (
    await ok(c.request('POST', '/api/devices/snapshots', { token, body: { name, device_filter: { site_id: siteId } } }), 201, 'create snapshot')
  ).snapshot;
  await ok(c.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token, body: { timeout_seconds: timeoutSeconds } }), 202, 'collect');
  return snap.id;
}

export async function snapshotOf(c: Api, token: string, id: string): Promise<any> {
  return (await ok(c.request('GET', `/api/devices/snapshots/${id}`, { token }), 200, 'read snapshot')).snapshot;
}

/** An ed25519 host key ssh2 can read back (see readableKeyPair). */
export const verifiedHostKey = (): string => readableKeyPair().private;

/**
 * The snapshot ends completed with one stored version and one final, succeeded job per device:
 * no device result lost, none recorded twice. Reads the snapshot through `c`, the rows from `db`.
 */
export async function expectEveryDeviceOnce(
  c: Api,
  token: string,
  db: Db,
  snapshotId: string,
  deviceIds: string[],
): Promise<{ done: any; jobs: any[] }> {
  const done = await until(
    'the snapshot to finish',
    async () => {
      const s = await snapshotOf(c, token, snapshotId);
      return s.status === 'collecting' ? null : s;
    },
    150_000,
    250,
  );
  expect(done).toMatchObject({ status: 'completed', total_devices: deviceIds.length, successful_devices: deviceIds.length, failed_devices: 0 });
  const versions: { device_id: string; n: number }[] = await db('config_versions')
    .where({ snapshot_id: snapshotId })
    .select('device_id')
    .count('* as n')
    .groupBy('device_id');
  expect(versions.map((v) => v.device_id).sort()).toEqual([...deviceIds].sort());
  expect(versions.every((v) => Number(v.n) === 1)).toBe(true);
  const jobs = await db('jobs').where({ group_id: snapshotId });
  expect(jobs).toHaveLength(deviceIds.length);
  expect(jobs.every((j) => j.status === 'succeeded')).toBe(true);
  return { done, jobs };
}
