/**
 * Discovery poll benchmark (`npm run bench -- poll --devices 1000 --agents 2`).
 *
 * End to end: simulated SSH devices (`npm run sim`, its own process, each answering the six
 * discovery show commands), a controller on a fresh PostgreSQL database (this process), NATS
 * JetStream and `--agents` real `npm run agent` processes. The clock runs from the first
 * POST /api/devices/:id/poll to the last poll result stored with its records.
 *
 * Floor: the same devices polled by the SSH driver and the parsers alone (open, the dialect's
 * show commands, parse, close), in this one process, at the agents' total concurrency.
 *
 * Options: --devices N (1000), --agents N (2), --concurrency N per agent (32), --via post|schedule
 * (post: one POST /poll per device, the default; schedule: poll_enabled on every device, all due
 * at once, claimed and submitted in batches by the background scheduler).
 * Target: end-to-end / floor ≤ 1.3.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { pollOverCli } from '../../agent/src/discovery/ssh-poll';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { ADMIN } from '../helpers/controller';
import { benchController } from './controller';
import { mapLimit, Semaphore } from '../../shared/src/jobs/limit';
import { deleteStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';
import { freePort, until as waitFor } from '../agents/helpers';

const ROOT = join(import.meta.dirname, '../..');
const DEVICE_LOGIN = { username: 'netops', password: 'bench-Device-pw' };
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const connectSlotsOf = (concurrency: number) => Math.min(concurrency, 16);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a whole number above 0`);
  return value;
}

function spawnTs(entry: string, args: string[], env: Record<string, string>): { child: ChildProcess; output(): string; stop(): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/** The driver and parsers alone, at the agents' total concurrency. */
async function driverFloor(targets: DeviceTarget[], sessions: number, connects: number): Promise<{ seconds: number; failed: number; records: number }> {
  const connectSlots = new Semaphore(connects);
  let failed = 0;
  let records = 0;
  const started = performance.now();
  await mapLimit(targets, sessions, async (target) => {
    try {
      const session = await connectSlots.use(() => sshCliDriver.open(target));
      try {
        const r = await pollOverCli(session, target.device_type);
        if (r.sections.some((s) => s.status === 'failed')) failed += 1;
        records += Object.values(r.records).reduce((n, list) => n + list.length, 0);
      } finally {
        await session.close();
      }
    } catch {
      failed += 1;
    }
  });
  return { seconds: (performance.now() - started) / 1000, failed, records };
}

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const agentCount = option(args, 'agents', 2);
  const concurrency = option(args, 'concurrency', 32);
  const via = args.includes('--via') ? args[args.indexOf('--via') + 1] : 'post';
  if (via !== 'post' && via !== 'schedule') throw new Error('--via must be post or schedule');
  const prefix = `bench${randomBytes(4).toString('hex')}`;

  const c = await benchController({ natsUrl: NATS_URL, natsPrefix: prefix, discovery: { scheduler: via === 'schedule', tickMs: 200 } });
  const { app, db, base } = c;
  const call = (method: string, path: string, token: string | null, body?: string, type?: string) => c.request(method, path, token, body, type);

  const simPort = await freePort();
  const sim = spawnTs('test/sim/main.ts', ['--devices', String(devices), '--spread-hosts', '--base-port', String(simPort), '--username', DEVICE_LOGIN.username, '--password', DEVICE_LOGIN.password, '--csv'], {});
  const agents: ReturnType<typeof spawnTs>[] = [];
  try {
    await waitFor('the simulator to start', async () => {
      if (sim.child.exitCode !== null) throw new Error(`simulator exited: ${sim.output()}`);
      return /device\(s\) up in/.test(sim.output());
    }, 120_000, 100);
    const csv = sim.output().split('\n').filter((l) => /^name,|,simulator,/.test(l)).join('\n') + '\n';
    const { access_token: token } = await call('POST', '/api/auth/login', null, JSON.stringify(ADMIN));
    const profile = await call('POST', '/api/profiles', token, JSON.stringify({ name: 'bench', ...DEVICE_LOGIN, ssh_port: simPort }));
    const summary = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, csv, 'text/csv');
    if (summary.imported !== devices) throw new Error(`import stored ${summary.imported} of ${devices} devices: ${JSON.stringify(summary.errors.slice(0, 3))}`);
    const rows: { id: string; name: string; host: string; device_type: string }[] = await db('devices').select('id', 'name', 'host', 'device_type');

    for (let i = 0; i < agentCount; i++) {
      const created = await call('POST', '/api/agents', token, JSON.stringify({ name: `bench-agent-${i + 1}`, site_id: null }));
      agents.push(spawnTs('agent/src/main.ts', [], {
        NATS_URL,
        SWITCHBOARD_URL: base,
        SWITCHBOARD_ENROLL_TOKEN: created.enrollment_token,
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-bench-agent-')),
        SWITCHBOARD_AGENT_CONCURRENCY: String(concurrency),
      }));
    }
    await waitFor('the agents to come online', async () => {
      for (const a of agents) if (a.child.exitCode !== null) throw new Error(`agent exited: ${a.output()}`);
      const list = await call('GET', '/api/agents', token);
      return list.agents.filter((a: { status: string }) => a.status === 'online').length >= agentCount;
    }, 60_000, 200);

    const endToEnd = async () => {
      await db('discovery_records').delete();
      await db('discovery_polls').delete();
      await db('devices').update({ poll_enabled: false, next_poll_at: null });
      const started = performance.now();
      if (via === 'post') await mapLimit(rows, 32, (r) => call('POST', `/api/devices/${r.id}/poll`, token));
      else await db('devices').update({ poll_enabled: true, poll_interval_minutes: 10080, next_poll_at: db.fn.now() });
      const queuedS = (performance.now() - started) / 1000;
      await waitFor('the polls to be queued', async () => {
        const [{ n }] = (await db.raw('SELECT count(*)::int AS n FROM discovery_polls')).rows;
        return n === rows.length;
      }, 900_000, 25);
      await waitFor('every poll to finish', async () => {
        const [{ open }] = (await db.raw("SELECT count(*)::int AS open FROM discovery_polls WHERE status = 'queued'")).rows;
        return open === 0;
      }, 900_000, 25);
      const seconds = (performance.now() - started) / 1000;
      const byStatus = (await db.raw('SELECT status, count(*)::int AS n FROM discovery_polls GROUP BY status')).rows as { status: string; n: number }[];
      const [{ n: records }] = (await db.raw('SELECT count(*)::int AS n FROM discovery_records')).rows;
      return { seconds, queuedS, byStatus, records };
    };

    console.log(`poll benchmark: ${devices} simulated vendor_ios devices, ${agentCount} agent(s) × ${concurrency} sessions, NATS ${NATS_URL}, polls queued by ${via === 'post' ? 'POST /api/devices/:id/poll' : 'the background scheduler'}`);
    const warm = await endToEnd(); // JIT, connection pools, NATS consumers
    const e2e = await endToEnd();
    const targets: DeviceTarget[] = rows.map((r) => ({
      id: r.id, name: r.name, host: r.host, device_type: r.device_type, credentials: DEVICE_LOGIN,
      ports: { ssh: simPort, netconf: 830, gnmi: 9339 }, gnmi_tls: false, gnmi_skip_verify: false,
    }));
    await driverFloor(targets.slice(0, Math.min(100, targets.length)), concurrency * agentCount, connectSlotsOf(concurrency) * agentCount); // warm-up
    const floor = await driverFloor(targets, concurrency * agentCount, connectSlotsOf(concurrency) * agentCount);

    const ratio = e2e.seconds / floor.seconds;
    console.log(`warm-up round: ${warm.seconds.toFixed(2)} s`);
    console.log(`end to end: ${e2e.seconds.toFixed(2)} s, ${(devices / e2e.seconds).toFixed(1)} polls/s (${via === 'post' ? `all ${devices} POSTs answered after ${e2e.queuedS.toFixed(2)} s` : 'from the moment all became due'}); results ${e2e.byStatus.map((s) => `${s.status} ${s.n}`).join(', ')}; ${e2e.records} records stored`);
    console.log(`driver-only floor: ${floor.seconds.toFixed(2)} s, ${(devices / floor.seconds).toFixed(1)} polls/s (${floor.failed} failed, ${floor.records} records parsed)`);
    console.log(`ratio end-to-end / floor: ${ratio.toFixed(2)} (target ≤ 1.3)`);
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await sim.stop();
    await c.close();
    const nc = await connect({ servers: NATS_URL }).catch(() => null);
    if (nc) {
      await deleteStreams(await nc.jetstreamManager(), natsNames(prefix)).catch(() => undefined);
      await nc.close();
    }
  }
}
