/**
 * What the end-to-end benchmarks share around their in-process controller: simulated SSH devices
 * and agents as processes of their own, and the driver-only floor an end-to-end run is compared with.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { mapLimit, Semaphore } from '../../shared/src/jobs/limit';
import { until } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { spawnTs, waitUntil, type Proc } from '../helpers/processes';
import type { benchController } from './controller';
import { FLOOR_WORK, type FloorWorkName } from './floor-work';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const DEVICE_LOGIN = { username: 'netops', password: 'bench-Device-pw' };
/** Agents use min(concurrency, 16) connection set-ups at once (agent/src/config.ts). */
export const connectSlotsOf = (concurrency: number) => Math.min(concurrency, 16);

type BenchController = Awaited<ReturnType<typeof benchController>>;

/** `npm run sim` devices (one loopback address each) in their own process, with the CSV it prints for the import. */
export async function startSshSim(devices: number, login = DEVICE_LOGIN): Promise<{ proc: Proc; port: number; csv: string }> {
  const port = await freePort();
  const proc = spawnTs('test/sim/main.ts', {}, [
    '--kind',
    'ssh',
    '--devices',
    String(devices),
    '--spread-hosts',
    '--base-port',
    String(port),
    '--username',
    login.username,
    '--password',
    login.password,
    '--csv',
  ]);
  const csvLines = () =>
    proc
      .output()
      .split('\n')
      .filter((l) => /^name,|,simulator,/.test(l));
  await waitUntil('the simulator and its CSV', () => /device\(s\) up in/.test(proc.output()) && csvLines().length === devices + 1, proc, 300_000);
  return { proc, port, csv: csvLines().join('\n') + '\n' };
}

/** The simulator's devices as the drivers take them (the floor connects without the controller). */
export function simTargets(
  rows: { id: string; name: string; host: string; device_type: string }[],
  sshPort: number,
  login: { username: string; password: string } = DEVICE_LOGIN,
): DeviceTarget[] {
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    host: r.host,
    device_type: r.device_type,
    credentials: { ...login },
    ports: { ssh: sshPort, netconf: 830, gnmi: 9339 },
    gnmi_tls: false,
    gnmi_skip_verify: false,
  }));
}

/** `count` agents of the default pool as `npm run agent` processes, enrolled through the API; resolves once all are online. */
export async function startAgents(c: BenchController, token: string, count: number, concurrency: number): Promise<Proc[]> {
  const agents: Proc[] = [];
  for (let i = 0; i < count; i++) {
    const created = await c.request('POST', '/api/agents', token, JSON.stringify({ name: `bench-agent-${i + 1}`, site_id: null }));
    agents.push(
      spawnTs('agent/src/main.ts', {
        NATS_URL,
        SWITCHBOARD_URL: c.base,
        SWITCHBOARD_ENROLL_TOKEN: created.enrollment_token,
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-bench-agent-')),
        SWITCHBOARD_AGENT_CONCURRENCY: String(concurrency),
        LOG_LEVEL: 'warn',
      }),
    );
  }
  await until(
    'the agents to come online',
    async () => {
      for (const a of agents) if (!a.running) throw new Error(`agent exited: ${a.output()}`);
      const list = await c.request('GET', '/api/agents', token);
      return list.agents.filter((a: { status: string }) => a.status === 'online').length >= count;
    },
    60_000,
    200,
  );
  return agents;
}

/**
 * The floor: `work` on every target in a session of its own, `sessions` at once with `connects`
 * set-ups at once, as the agents together run them. A target whose work throws or answers false fails.
 */
export async function driverFloor<S extends { close(): Promise<void> }>(
  targets: DeviceTarget[],
  limits: { sessions: number; connects: number },
  open: (target: DeviceTarget) => Promise<S>,
  work: (session: S, target: DeviceTarget) => Promise<boolean | void>,
): Promise<{ seconds: number; failed: number }> {
  const connectSlots = new Semaphore(limits.connects);
  let failed = 0;
  const started = performance.now();
  await mapLimit(targets, limits.sessions, async (target) => {
    try {
      const session = await connectSlots.use(() => open(target));
      try {
        if ((await work(session, target)) === false) failed += 1;
      } finally {
        await session.close();
      }
    } catch {
      failed += 1;
    }
  });
  return { seconds: (performance.now() - started) / 1000, failed };
}

/**
 * The floor of a benchmark: its floor work (floor-work.ts) on every target, in this process.
 * Answers what the agents would have sent back (for the protocol floor) and the records parsed.
 */
export async function workFloor(name: FloorWorkName, targets: DeviceTarget[], limits: { sessions: number; connects: number }) {
  const work = FLOOR_WORK[name];
  const results: unknown[] = [];
  let records = 0;
  const floor = await driverFloor(targets, limits, work.open, async (session, target) => {
    const outcome = await work.run(session, target);
    results.push(outcome.result);
    records += outcome.records ?? 0;
    return outcome.ok;
  });
  return { ...floor, results, records };
}
