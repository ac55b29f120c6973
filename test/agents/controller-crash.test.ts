/**
 * A controller that dies holding agent results: the controller (`npm run controller`) is frozen
 * (SIGSTOP) until NATS has handed it results it can no longer acknowledge, then SIGKILLed and
 * started again. The results it held come back after the short results ack wait, not the old
 * fixed minute, so the restarted controller records every device well within it, each once.
 * Also: a job failed at its deadline whose result arrives later is logged with its job and device.
 * Real processes throughout: controllers, agents, NATS, SSH and gNMI simulators.
 */
import { randomBytes } from 'node:crypto';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsNames } from '../../shared/src/nats/subjects';
import { createTestDatabase } from '../helpers/postgres';
import { startAgentProcess, startControllerProcess, stopAll, type AgentProcess, type ControllerProcess } from '../helpers/processes';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, apiClient, dropNatsNamespace, makeProfile, until, type Api, type Org } from './helpers';

const ADMIN_PASSWORD = 'crash-admin-password-1';
const METRICS_TOKEN = 'crash-metrics-token';
const DEVICE_PASSWORD = 'crash-device-pw';
/** The fixed wait of old: a restarted controller had to sit this out before recording what the dead one held. */
const OLD_WAIT_MS = 60_000;

const databases: Awaited<ReturnType<typeof createTestDatabase>>[] = [];
let nc: NatsConnection;
let jsm: JetStreamManager;
const sims: SimSshDevice[] = [];
const targets: GnmiTarget[] = [];
const prefixes: string[] = [];

beforeAll(async () => {
  nc = await connect({ servers: SHARED_NATS });
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  await stopAll();
  await Promise.all([...sims.map((s) => s.close()), ...targets.map((t) => t.close())]);
  await nc?.close();
  for (const prefix of prefixes) await dropNatsNamespace(SHARED_NATS, prefix).catch(() => undefined);
  for (const db of databases) await db.drop().catch(() => undefined);
});

interface Installation {
  controller: ControllerProcess;
  api: Api;
  org: Org;
  agents: AgentProcess[];
  prefix: string;
}

/** A controller process with its own NATS namespace and two agent processes of the default pool. */
async function install(opts: { concurrency: number; env?: Record<string, string> }): Promise<Installation> {
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
    agents.push(await startAgentProcess({ natsUrl: SHARED_NATS, controllerUrl: controller.url, enrollToken: created.body.enrollment_token, concurrency: opts.concurrency, logLevel: 'warn' }));
  }
  await until('both agents online', async () => {
    const list = (await api.request('GET', '/api/agents', { token })).body.agents as { status: string }[];
    return list.length === 2 && list.every((a) => a.status === 'online');
  }, 60_000);
  return { controller, api, org, agents, prefix };
}

/** Results NATS handed to a controller that has not acknowledged them. */
async function unackedResults(prefix: string): Promise<number> {
  const names = natsNames(prefix);
  return (await jsm.consumers.info(names.resultsStream, names.resultsConsumer)).num_ack_pending;
}

/**
 * Freezes the controller until it holds results it cannot acknowledge (NATS keeps delivering to
 * its pending pull), kills it, starts it again and answers when the new one serves requests.
 */
async function crashHoldingResults(inst: Installation): Promise<number> {
  inst.controller.signal('SIGSTOP');
  await until('the frozen controller to hold unacknowledged results', async () => (await unackedResults(inst.prefix)) > 0, 60_000, 100);
  await inst.controller.kill('SIGKILL');
  inst.controller = await inst.controller.restart();
  return Date.now();
}

async function ssh(api: Api, org: Org, n: number, name: string, slow = true): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    // Output trickles, so each backup takes a moment and the crash lands mid-run.
    const faults = slow ? { slowOutput: { chunkBytes: 1024, intervalMs: 20 } } : {};
    const sim = await startSshDevice({ hostname: `${name}-${i}`, password: DEVICE_PASSWORD, faults });
    sims.push(sim);
    const profile = await makeProfile(api, org, { ssh_port: sim.port, password: DEVICE_PASSWORD });
    const res = await api.request('POST', '/api/devices', { token: org.token, body: { name: `${name}-${i}`, host: sim.host, device_type: 'vendor_ios', profile_id: profile } });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

describe('a controller killed while holding agent results', () => {
  it('mid-snapshot: the restarted controller records every device within seconds, each once', { timeout: 240_000 }, async () => {
    const inst = await install({ concurrency: 2 });
    const { api, org } = inst;
    const deviceIds = await ssh(api, org, 10, 'snap');
    const snap = (await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'through a crash' } })).body.snapshot;
    const started = await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 600 } });
    expect(started.status).toBe(202);
    await until('a first device recorded', async () => (await api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot.successful_devices >= 1, 60_000, 100);

    const upAt = await crashHoldingResults(inst);
    const done = await until('the snapshot to finish', async () => {
      const s = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
      return s.status === 'collecting' ? null : s;
    }, 120_000, 100);
    const tookMs = Date.now() - upAt;
    expect(done).toMatchObject({ status: 'completed', total_devices: 10, successful_devices: 10, failed_devices: 0 });
    // What the dead controller held came back after the results ack wait, not the old minute.
    expect(tookMs).toBeLessThan(OLD_WAIT_MS / 2);
    expect(await unackedResults(inst.prefix)).toBe(0);
    for (const id of deviceIds) {
      const versions = (await api.request('GET', `/api/config/devices/${id}/configs`, { token: org.token })).body;
      expect(versions.total, `versions of ${id}`).toBe(1);
    }
    // The stream depths are in /metrics.
    const metrics = await fetch(`${inst.controller.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
    expect(metrics).toMatch(/switchboard_nats_stream_messages\{stream="results"\} 0/);
    expect(metrics).toMatch(/switchboard_nats_results_unrecorded\{state="unacked"\} 0/);
  });

  it('mid-deployment: every device deployed once and the deployment completes on the restarted controller', { timeout: 240_000 }, async () => {
    const inst = await install({ concurrency: 2 });
    const { org } = inst;
    const deviceIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const target = await startGnmiTarget({ initialTree: { system: { config: { hostname: `old-${i}` } } }, faults: { delayMs: 300 } });
      targets.push(target);
      const profile = await makeProfile(inst.api, org, { gnmi_port: target.port, automation_transport: 'gnmi' });
      const res = await inst.api.request('POST', '/api/devices', { token: org.token, body: { name: `gn-${i}`, host: target.host, device_type: 'vendor_eos', profile_id: profile } });
      expect(res.status).toBe(201);
      deviceIds.push(res.body.id);
    }
    const tpl = await inst.api.request('POST', '/api/config/templates', {
      token: org.token,
      body: { name: 'hostname', platform: 'openconfig-gnmi', config_format: 'json', target_path: '/system/config', source: '{"hostname": "{{ hostname }}"}' },
    });
    expect(tpl.status).toBe(201);
    const stack = await inst.api.request('POST', '/api/config/stacks', { token: org.token, body: { name: 'crash', services: [{ template_id: tpl.body.id, order: 0, variables: { hostname: 'after-crash' } }] } });
    expect(stack.status).toBe(201);
    const dep = await inst.api.request('POST', '/api/config/deployments', { token: org.token, body: { stack_id: stack.body.id, name: 'through a crash', target_devices: deviceIds.map((device_id) => ({ device_id })) } });
    expect(dep.status, dep.text).toBe(201);
    await until('a first device deployed', async () => {
      const d = (await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token })).body;
      return (d.devices as { status: string }[]).some((x) => x.status === 'completed');
    }, 60_000, 100);

    const upAt = await crashHoldingResults(inst);
    const done = await until('the deployment to end', async () => {
      const d = (await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token })).body;
      return ['completed', 'failed', 'rolled_back'].includes(d.status) ? d : null;
    }, 120_000, 100);
    expect(Date.now() - upAt).toBeLessThan(OLD_WAIT_MS / 2);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    for (const target of targets) expect(JSON.stringify(target.tree())).toContain('after-crash');
    // Each device changed once: one deploy job per device.
    const jobs = await inst.api.request('GET', `/api/config/deployments/${dep.body.id}`, { token: org.token });
    expect((jobs.body.devices as unknown[]).length).toBe(6);
  });

  it('a deadline that passes while the dead controller held the results: the results are recorded, not failed as "none started"', { timeout: 180_000 }, async () => {
    const inst = await install({ concurrency: 2 });
    const { api, org } = inst;
    await ssh(api, org, 4, 'short', false);
    const snap = (await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'short deadline' } })).body.snapshot;
    const collectAt = Date.now();
    expect((await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 15 } })).status).toBe(202);
    await until('the jobs to start', () => anyRunning(inst), 30_000, 50);
    inst.controller.signal('SIGSTOP');
    await until('the frozen controller to hold unacknowledged results', async () => (await unackedResults(inst.prefix)) > 0, 60_000, 100);
    // The controller stays down past the deadline: only then does a new one come up.
    await until('the deadline to pass', () => Date.now() > collectAt + 17_000, 30_000, 200);
    await inst.controller.kill('SIGKILL');
    inst.controller = await inst.controller.restart();
    const done = await until('the snapshot to finish', async () => {
      const s = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
      return s.status === 'collecting' ? null : s;
    }, 60_000, 100);
    const backups = (await inst.api.request('GET', `/api/devices/snapshots/${snap.id}/backups`, { token: org.token })).body.backups as { status: string; error_message: string | null }[];
    expect(backups.map((b) => b.error_message ?? '').join('\n')).not.toMatch(/none started/);
    expect(done, JSON.stringify(backups)).toMatchObject({ total_devices: 4, successful_devices: 4, failed_devices: 0 });
  });

  it('a result that arrives after its job failed at the deadline is logged with its job and device', { timeout: 180_000 }, async () => {
    const inst = await install({ concurrency: 1 });
    const { api, org } = inst;
    const [deviceId] = await ssh(api, org, 1, 'late');
    // Both agents frozen once the job started: its deadline passes with no result.
    const snap = (await api.request('POST', '/api/devices/snapshots', { token: org.token, body: { name: 'late result' } })).body.snapshot;
    expect((await api.request('POST', `/api/devices/snapshots/${snap.id}/collect`, { token: org.token, body: { timeout_seconds: 6 } })).status).toBe(202);
    await until('the job to start', () => anyRunning(inst), 60_000, 50);
    inst.agents.forEach((a) => a.signal('SIGSTOP'));
    const failed = await until('the snapshot to end at its deadline', async () => {
      const s = (await api.request('GET', `/api/devices/snapshots/${snap.id}`, { token: org.token })).body.snapshot;
      return s.status === 'collecting' ? null : s;
    }, 60_000, 200);
    expect(failed.failed_devices).toBe(1);
    inst.agents.forEach((a) => a.signal('SIGCONT'));
    await until('the late result to be logged', async () => /a result arrived after its job was finalised/.test(inst.controller.output()), 60_000, 200);
    const line = inst.controller.output().split('\n').find((l) => l.includes('a result arrived after its job was finalised'))!;
    expect(line).toContain(deviceId);
    expect(JSON.parse(line)).toMatchObject({ device: deviceId, kind: 'backup', job_status: 'failed' });
  });
});

/** Whether any agent reports a job running (from the agents list). */
async function anyRunning(inst: Installation): Promise<boolean> {
  const list = (await inst.api.request('GET', '/api/agents', { token: inst.org.token })).body.agents as { active_jobs: number }[];
  return list.some((a) => a.active_jobs > 0);
}
