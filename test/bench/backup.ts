/**
 * Backup benchmark (`npm run bench -- backup --devices 1000 --agents 2`).
 *
 * End to end: simulated SSH devices (`npm run sim`, its own process), a controller on a fresh
 * PostgreSQL database (this process), NATS JetStream, and `--agents` real `npm run agent`
 * processes. The clock runs from the POST /api/config/devices/bulk-pull call to the last
 * stored config version of that snapshot.
 *
 * Floor: the same simulated devices pulled by the SSH driver alone, in this one process, at
 * the same concurrency as the agents together (sessions and connection set-ups).
 *
 * Options: --devices N (1000), --agents N (2), --concurrency N per agent (32), --rounds N (1).
 * Targets (2-core machine): 1,000 devices in ≤ 30 s end to end; end-to-end / floor ≤ 1.3.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { ADMIN } from '../helpers/controller';
import { benchController } from './controller';
import { mapLimit, Semaphore } from '../../shared/src/jobs/limit';
import { deleteStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';

const ROOT = join(import.meta.dirname, '../..');
const DEVICE_LOGIN = { username: 'netops', password: 'bench-Device-pw' };
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** Agents use min(concurrency, 16) connection set-ups at once (agent/src/config.ts). */
const connectSlotsOf = (concurrency: number) => Math.min(concurrency, 16);

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a whole number above 0`);
  return value;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
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

async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs: number, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Simulated devices in their own process; resolves with the CSV it prints for the import. */
async function startSim(devices: number, port: number) {
  const sim = spawnTs('test/sim/main.ts', ['--devices', String(devices), '--spread-hosts', '--base-port', String(port), '--username', DEVICE_LOGIN.username, '--password', DEVICE_LOGIN.password, '--csv'], {});
  await waitFor('the simulator to start', async () => {
    if (sim.child.exitCode !== null) throw new Error(`simulator exited: ${sim.output()}`);
    return /device\(s\) up in/.test(sim.output());
  }, 120_000, 100);
  const csv = sim.output().split('\n').filter((l) => /^name,|,simulator,/.test(l)).join('\n') + '\n';
  return { ...sim, csv };
}

/** The driver alone: open, fetch the running config, close — same concurrency as the agents. */
async function driverFloor(targets: DeviceTarget[], sessions: number, connects: number): Promise<{ seconds: number; failed: number }> {
  const connectSlots = new Semaphore(connects);
  let failed = 0;
  const started = performance.now();
  await mapLimit(targets, sessions, async (target) => {
    try {
      const session = await connectSlots.use(() => sshCliDriver.open(target));
      try {
        await session.fetchConfig();
      } finally {
        await session.close();
      }
    } catch {
      failed += 1;
    }
  });
  return { seconds: (performance.now() - started) / 1000, failed };
}

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const agentCount = option(args, 'agents', 2);
  const concurrency = option(args, 'concurrency', 32);
  const rounds = option(args, 'rounds', 1);
  const prefix = `bench${randomBytes(4).toString('hex')}`;

  const c = await benchController({ natsUrl: NATS_URL, natsPrefix: prefix });
  const { app, db, base } = c;
  const call = (method: string, path: string, token: string | null, body?: string, type?: string) => c.request(method, path, token, body, type);

  const simPort = await freePort();
  const sim = await startSim(devices, simPort);
  const agents: ReturnType<typeof spawnTs>[] = [];
  try {
    const { access_token: token } = await call('POST', '/api/auth/login', null, JSON.stringify(ADMIN));
    const profile = await call('POST', '/api/profiles', token, JSON.stringify({ name: 'bench', ...DEVICE_LOGIN, ssh_port: simPort }));
    const summary = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, sim.csv, 'text/csv');
    if (summary.imported !== devices) throw new Error(`import stored ${summary.imported} of ${devices} devices: ${JSON.stringify(summary.errors.slice(0, 3))}`);
    const rows: { id: string; name: string; host: string; device_type: string }[] = await db('devices').select('id', 'name', 'host', 'device_type');
    const ids = rows.map((r) => r.id);

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

    /** One bulk pull of `subset`; seconds from the API call to the last stored version. */
    const endToEnd = async (subset: string[]) => {
      const [{ now: before }] = (await db.raw('SELECT clock_timestamp() AS now')).rows;
      const started = performance.now();
      const answer = await call('POST', '/api/config/devices/bulk-pull', token, JSON.stringify({ device_ids: subset, method: 'cli' }));
      const acceptedMs = performance.now() - started;
      const snap = await waitFor('the bulk pull to finish', async () => {
        const s = (await call('GET', `/api/devices/snapshots/${answer.snapshot_id}`, token)).snapshot;
        return s.status !== 'collecting' ? s : null;
      }, 600_000, 250); // the end time comes from the database, so polling gently costs no accuracy
      const [{ last }] = (await db.raw('SELECT max(created_at) AS last FROM config_versions WHERE snapshot_id = ?', [answer.snapshot_id])).rows;
      const at = (t: Date | string | null) => (t ? ((new Date(t).getTime() - new Date(before).getTime()) / 1000).toFixed(2) : '-');
      const [p] = (await db.raw(
        `SELECT max(created_at) AS submitted, max(dispatched_at) AS dispatched, min(started_at) AS first_start,
                max(started_at) AS last_start, max(finished_at) AS last_finish FROM jobs WHERE group_id = ?`,
        [answer.snapshot_id],
      )).rows;
      if (process.env.BENCH_DEBUG) {
        const perSecond = async (sql: string) =>
          (await db.raw(`SELECT floor(extract(epoch FROM t - ?::timestamptz))::int AS s, count(*)::int AS n FROM (${sql}) x GROUP BY 1 ORDER BY 1`, [before, answer.snapshot_id]))
            .rows.map((h: { s: number; n: number }) => `${h.s}:${h.n}`).join(' ');
        console.log('  agent starts per second:', await perSecond('SELECT started_at AS t FROM jobs WHERE group_id = ?'));
        console.log('  versions stored per second:', await perSecond('SELECT created_at AS t FROM config_versions WHERE snapshot_id = ?'));
      }
      const seconds = (new Date(last).getTime() - new Date(before).getTime()) / 1000;
      const phases = `submitted ${at(p.submitted)} s, dispatched ${at(p.dispatched)} s, agents started ${at(p.first_start)}–${at(p.last_start)} s, ` +
        `last job final ${at(p.last_finish)} s, last version stored ${at(last)} s`;
      return { seconds, acceptedMs, snap, phases };
    };

    const targets: DeviceTarget[] = rows.map((r) => ({
      id: r.id, name: r.name, host: r.host, device_type: r.device_type, credentials: { ...DEVICE_LOGIN },
      ports: { ssh: simPort, netconf: 830, gnmi: 9339 }, gnmi_tls: false, gnmi_skip_verify: false,
    }));
    const sessions = agentCount * concurrency;
    const connects = agentCount * connectSlotsOf(concurrency);

    // Warm-up for both paths (JIT, connection pools, prepared plans), not timed.
    const warm = ids.slice(0, Math.min(50, ids.length));
    await endToEnd(warm);
    await driverFloor(targets.slice(0, warm.length), sessions, connects);

    console.log(`backup benchmark: ${devices} simulated SSH devices (vendor_ios), ${agentCount} agents × concurrency ${concurrency}, NATS ${NATS_URL}`);
    console.log('round,end_to_end_s,end_to_end_devices_per_s,accepted_ms,successful,failed,floor_s,floor_devices_per_s,floor_failed,ratio');
    for (let round = 1; round <= rounds; round++) {
      const e2e = await endToEnd(ids);
      const floor = await driverFloor(targets, sessions, connects);
      console.log([
        round,
        e2e.seconds.toFixed(2),
        (devices / e2e.seconds).toFixed(1),
        Math.round(e2e.acceptedMs),
        e2e.snap.successful_devices,
        e2e.snap.failed_devices,
        floor.seconds.toFixed(2),
        (devices / floor.seconds).toFixed(1),
        floor.failed,
        (e2e.seconds / floor.seconds).toFixed(2),
      ].join(','));
      console.log(`  phases of round ${round} (from the API call): ${e2e.phases}`);
    }
    console.log(`machine load average now: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log('targets: 1,000 devices ≤ 30 s end to end; ratio (end to end / floor) ≤ 1.3');
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

if (import.meta.url === `file://${process.argv[1]}`) {
  run(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
