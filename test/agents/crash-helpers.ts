/**
 * The set-up of the controller crash suites: a controller process with its own NATS namespace and
 * database, two agent processes, SSH simulators, and a way to kill the controller while NATS has
 * handed it agent results it has not acknowledged.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { expect } from 'vitest';
import { natsNames } from '../../shared/src/nats/subjects';
import { createTestDatabase } from '../helpers/postgres';
import { startAgentProcess, startControllerProcess, stopAll, type AgentProcess, type ControllerProcess } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, apiClient, dropNatsNamespace, makeProfile, until, type Api, type Org } from './helpers';

export const ADMIN_PASSWORD = 'crash-admin-password-1';
export const METRICS_TOKEN = 'crash-metrics-token';
const DEVICE_PASSWORD = 'crash-device-pw';
/** The fixed wait of old: a restarted controller had to sit this out before recording what the dead one held. */
export const OLD_WAIT_MS = 60_000;

const databases: Awaited<ReturnType<typeof createTestDatabase>>[] = [];
let nc: NatsConnection;
let jsm: JetStreamManager;
const sims: SimSshDevice[] = [];
const prefixes: string[] = [];
/** Closed by cleanUp(): simulators and the like a test file started. */
export const closers: (() => Promise<void>)[] = [];

export async function setUp(): Promise<void> {
  nc = await connect({ servers: SHARED_NATS });
  jsm = await nc.jetstreamManager();
}

export async function cleanUp(): Promise<void> {
  await stopAll();
  await Promise.all([...sims.map((s) => s.close()), ...closers.map((c) => c())]);
  await nc?.close();
  for (const prefix of prefixes) await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
  for (const db of databases) await db.drop().catch(() => undefined);
}

export interface Installation {
  controller: ControllerProcess;
  api: Api;
  org: Org;
  agents: AgentProcess[];
  prefix: string;
  databaseUrl: string;
}

/** A controller process with its own NATS namespace and two agent processes of the default pool. */
export async function install(opts: { concurrency: number; env?: Record<string, string> }): Promise<Installation> {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  prefixes.push(prefix);
  const db = await createTestDatabase();
  databases.push(db);
  const controller = await startControllerProcess({
    databaseUrl: db.url,
    natsUrl: SHARED_NATS,
    natsPrefix: prefix,
    adminPassword: ADMIN_PASSWORD,
    metricsToken: METRICS_TOKEN,
    env: { SWITCHBOARD_JOB_SWEEP_MS: '200', ...opts.env },
  });
  const api = apiClient(controller.url);
  const login = await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  expect(login.status).toBe(200);
  const token = login.body.access_token as string;
  const org: Org = { orgId: (await api.request('GET', '/api/auth/me', { token })).body.org_id, token };
  const settings = { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 };
  expect((await api.request('PUT', '/api/admin/settings', { token, body: { settings } })).status).toBe(200);
  const agents: AgentProcess[] = [];
  for (const name of ['crash-a', 'crash-b']) {
    const created = await api.request('POST', '/api/agents', { token, body: { name, site_id: null } });
    expect(created.status).toBe(201);
    agents.push(
      await startAgentProcess({
        natsUrl: SHARED_NATS,
        controllerUrl: controller.url,
        enrollToken: created.body.enrollment_token,
        concurrency: opts.concurrency,
        logLevel: 'warn',
      }),
    );
  }
  await until(
    'both agents online',
    async () => {
      const list = (await api.request('GET', '/api/agents', { token })).body.agents as { status: string }[];
      return list.length === 2 && list.every((a) => a.status === 'online');
    },
    60_000,
  );
  return { controller, api, org, agents, prefix, databaseUrl: db.url };
}

/** Results NATS handed to a controller that has not acknowledged them. */
export async function unackedResults(prefix: string): Promise<number> {
  const names = natsNames(prefix);
  return (await jsm.consumers.info(names.resultsStream, names.resultsConsumer)).num_ack_pending;
}

/**
 * Freezes the controller until it holds results it cannot acknowledge (NATS keeps delivering to
 * its pending pull), kills it, starts it again and answers when the new one serves requests.
 */
export async function crashHoldingResults(inst: Installation): Promise<number> {
  inst.controller.signal('SIGSTOP');
  await until('the frozen controller to hold unacknowledged results', async () => (await unackedResults(inst.prefix)) > 0, 60_000, 100);
  await inst.controller.kill('SIGKILL');
  inst.controller = await inst.controller.restart();
  return Date.now();
}

/** Output trickles at this pace: a backup then takes a few seconds, so a crash lands mid-job. */
export const SLOW = { chunkBytes: 256, intervalMs: 50 };
export const SLOWER = { chunkBytes: 128, intervalMs: 100 };

/** `n` SSH simulators as devices of the organization (of site `siteId` when given). */
export async function sshDevices(api: Api, org: Org, n: number, name: string, slowOutput = SLOW, siteId?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const sim = await startSshDevice({ hostname: `${name}-${i}`, password: DEVICE_PASSWORD, faults: { slowOutput } });
    sims.push(sim);
    const profile = await makeProfile(api, org, { ssh_port: sim.port, password: DEVICE_PASSWORD });
    const res = await api.request('POST', '/api/devices', {
      token: org.token,
      body: { name: `${name}-${i}`, host: sim.host, device_type: 'vendor_ios', profile_id: profile, ...(siteId ? { site_id: siteId } : {}) },
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

/** How many jobs are in one of `statuses`, read from the installation's database. */
export async function jobsIn(inst: Installation, statuses: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: inst.databaseUrl });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM jobs WHERE status = ANY($1)', [statuses])).rows[0].n);
  } finally {
    await client.end();
  }
}
