/**
 * One snapshot over simulated SSH devices on a three-node NATS cluster (R3 streams) while the
 * node the controller is connected to is SIGKILLed and started again mid-run. Everything runs
 * as its own process (controller, agents, simulator, three nats-servers). Shared by the test
 * (test/agents/nats-cluster.test.ts, a few hundred devices) and `npm run bench -- cluster`
 * (1,000 devices): both read the same facts from the database and the processes' logs.
 */
import { connect } from 'nats';
import { createDb } from '../../controller/src/db/knex';
import { DEFAULT_PREFIX, natsNames } from '../../shared/src/nats/subjects';
import { startSshSim } from '../bench/fleet';
import { createTestDatabase } from '../helpers/postgres';
import {
  startAgentProcess,
  startControllerProcess,
  startNatsCluster,
  stopAll,
  waitUntil,
  type AgentProcess,
  type NatsCluster,
  type Proc,
} from '../helpers/processes';

const LOGIN = { username: 'netops', password: 'cluster-Device-pw' };
const ADMIN_PASSWORD = 'cluster-admin-password';
const RECONNECT_LOG = 'NATS connection reconnect';

export interface ClusterRunOptions {
  devices: number;
  agents: number;
  concurrency: number;
  log?: (text: string) => void;
}

export interface ClusterRunFacts {
  /** num_replicas of the jobs and results streams. */
  replicas: number[];
  snapshot: { status: string; total_devices: number; successful_devices: number; failed_devices: number };
  /** Devices done when the node was killed (less than all: it really was mid-run). */
  doneAtKill: number;
  seconds: number;
  /** Config versions stored for the snapshot, per device (exactly once: every count 1). */
  versionsPerDevice: number[];
  devicesWithVersion: number;
  jobs: number;
  openJobs: number;
  recordFailures: number;
  /** The nodes killed and restarted, one after the other (a second one when no agent was on the first). */
  killed: string[];
  /** Who was connected to the killed nodes (NATS connection names), and who of them logged a reconnect. */
  clientsOnKilled: string[];
  reconnected: string[];
  /** Agent processes still running their first process at the end (none exited or was restarted). */
  agentsNeverRestarted: number;
  /** Agents online with a heartbeat newer than the node's restart. */
  agentsHeardAfterRestart: number;
}

async function call(base: string, method: string, path: string, token: string | null, body?: unknown, type = 'application/json'): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': type } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Which of our processes (by NATS connection name) each node serves. */
async function clientsOf(cluster: NatsCluster, node: string): Promise<string[]> {
  const connz = await cluster.node(node).monitor('/connz?limit=1024');
  return ((connz.connections ?? []) as { name?: string }[]).map((c) => c.name ?? '').filter((n) => n.startsWith('switchboard-'));
}

async function streamReplicas(url: string): Promise<number[]> {
  const nc = await connect({ servers: url.split(',') });
  try {
    const jsm = await nc.jetstreamManager();
    const names = natsNames();
    return await Promise.all([names.jobsStream, names.resultsStream].map(async (s) => (await jsm.streams.info(s)).config.num_replicas));
  } finally {
    await nc.close();
  }
}

export async function runClusterSnapshot(o: ClusterRunOptions): Promise<ClusterRunFacts> {
  const log = o.log ?? (() => undefined);
  const cluster = await startNatsCluster(3);
  const database = await createTestDatabase();
  const db = await createDb(database.url, '/tmp');
  let sim: Proc | null = null;
  try {
    log(`NATS cluster up: ${cluster.url}`);
    const ctl = await startControllerProcess({
      databaseUrl: database.url,
      natsUrl: cluster.url,
      adminPassword: ADMIN_PASSWORD,
      // The streams are read back under the default names: pin the prefix they use.
      natsPrefix: DEFAULT_PREFIX,
      env: { SWITCHBOARD_NATS_REPLICAS: '3', SWITCHBOARD_JOB_SWEEP_MS: '500' },
    });
    const replicas = await streamReplicas(cluster.url);
    const fleet = await startSshSim(o.devices, LOGIN);
    sim = fleet.proc;
    const base = ctl.url;
    const { access_token: token } = await call(base, 'POST', '/api/auth/login', null, { username: 'admin', password: ADMIN_PASSWORD });
    await call(base, 'PUT', '/api/admin/settings', token, { settings: { 'agents.heartbeat_seconds': 2, 'agents.offline_after_seconds': 10 } });
    const profile = await call(base, 'POST', '/api/profiles', token, { name: 'cluster', ...LOGIN, ssh_port: fleet.port });
    const imported = await call(base, 'POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, fleet.csv, 'text/csv');
    if (imported.imported !== o.devices) throw new Error(`import stored ${imported.imported} of ${o.devices} devices`);

    const agents: (AgentProcess & { id: string })[] = [];
    for (let i = 0; i < o.agents; i++) {
      const created = await call(base, 'POST', '/api/agents', token, { name: `cluster-agent-${i + 1}`, site_id: null });
      const proc = await startAgentProcess({
        natsUrl: cluster.url,
        controllerUrl: base,
        enrollToken: created.enrollment_token,
        concurrency: o.concurrency,
        logLevel: 'warn',
        readyTimeoutMs: 120_000,
      });
      agents.push(Object.assign(proc, { id: created.id as string }));
    }
    const agentViews = async () =>
      (await call(base, 'GET', '/api/agents', token)).agents as { id: string; status: string; last_seen_at: string | null }[];
    await waitUntil(
      'every agent online',
      async () => (await agentViews()).filter((a) => a.status === 'online').length === o.agents,
      undefined,
      120_000,
    );
    log(`${o.agents} agents online; ${o.devices} devices imported`);

    const snap = (await call(base, 'POST', '/api/devices/snapshots', token, { name: 'through a NATS node restart' })).snapshot;
    const t0 = performance.now();
    await call(base, 'POST', `/api/devices/snapshots/${snap.id}/collect`, token, { timeout_seconds: 900 });
    const progress = async () => (await call(base, 'GET', `/api/devices/snapshots/${snap.id}`, token)).snapshot;
    const clients = new Map<string, Proc>([['switchboard-controller', ctl], ...agents.map((a): [string, Proc] => [a.id, a])]);
    const procOf = (connection: string) => [...clients].find(([key]) => connection === key || connection.includes(`(${key})`))?.[1];
    const nodeServing = async (key: string) => {
      for (const n of cluster.nodes) if ((await clientsOf(cluster, n.name)).some((c) => procOf(c) === clients.get(key))) return n.name;
      throw new Error(`${key} is connected to no node of the cluster`);
    };
    /** SIGKILL, down until each of its clients noticed, then back on the same port and store. */
    const killAndRestart = async (name: string) => {
      const served = await clientsOf(cluster, name);
      const watched = served
        .map((c) => procOf(c))
        .filter((p): p is Proc => !!p)
        .map((p) => ({ p, from: p.output().length }));
      log(`killing ${name} (serving ${served.length} of our connections) with ${(await progress()).successful_devices} of ${o.devices} devices done`);
      await cluster.node(name).kill();
      for (const { p, from } of watched)
        await waitUntil('a client to notice the lost node', () => p.output().slice(from).includes('NATS connection disconnect'), p, 60_000);
      await cluster.node(name).start();
      await cluster.ready();
      log(`${name} restarted`);
      return served;
    };

    // Mid-run: some devices recorded, most still to go. The controller's node goes first; if no
    // agent was on it, the node of an agent goes next, so both ends have to reconnect.
    let doneAtKill = 0;
    await waitUntil(
      'a part of the snapshot to be recorded',
      async () => (doneAtKill = (await progress()).successful_devices) >= Math.max(1, Math.floor(o.devices / 10)),
      undefined,
      300_000,
    );
    const killed = [await nodeServing('switchboard-controller')];
    const clientsOnKilled = await killAndRestart(killed[0]);
    if (!clientsOnKilled.some((c) => c !== 'switchboard-controller')) {
      killed.push(await nodeServing(agents[0].id));
      clientsOnKilled.push(...(await killAndRestart(killed[1])));
    }
    const restartedAt = Date.now();

    const snapshot = await (async () => {
      for (;;) {
        const s = await progress();
        if (s.status !== 'collecting') return s;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const seconds = (performance.now() - t0) / 1000;
    log(`snapshot ${snapshot.status} in ${seconds.toFixed(1)} s`);

    const perDevice: { n: string }[] = await db('config_versions')
      .where({ snapshot_id: snap.id })
      .groupBy('device_id')
      .select(db.raw('count(*) as n'));
    const [jobs] = await db('jobs')
      .where({ group_id: snap.id })
      .select(
        db.raw('count(*)::int as total'),
        db.raw(`count(*) filter (where status in ('queued', 'dispatched', 'running'))::int as open`),
        db.raw('coalesce(sum(record_failures), 0)::int as failures'),
      );
    await waitUntil(
      'every agent heard after the restart',
      async () => (await agentViews()).every((a) => a.status === 'online' && a.last_seen_at && new Date(a.last_seen_at).getTime() > restartedAt),
      undefined,
      60_000,
    );
    const views = await agentViews();
    const reconnected = clientsOnKilled.filter((c) => procOf(c)?.output().includes(RECONNECT_LOG));
    return {
      replicas,
      snapshot,
      doneAtKill,
      seconds,
      versionsPerDevice: perDevice.map((r) => Number(r.n)),
      devicesWithVersion: perDevice.length,
      jobs: jobs.total,
      openJobs: jobs.open,
      recordFailures: jobs.failures,
      killed,
      clientsOnKilled,
      reconnected,
      agentsNeverRestarted: agents.filter((a) => a.running).length,
      agentsHeardAfterRestart: views.filter((a) => a.status === 'online' && a.last_seen_at && new Date(a.last_seen_at).getTime() > restartedAt)
        .length,
    };
  } finally {
    await sim?.stop(5_000);
    await db.destroy();
    await stopAll(); // the controller, agents and cluster nodes
    await database.drop().catch(() => undefined);
  }
}
