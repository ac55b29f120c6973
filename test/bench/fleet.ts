/**
 * What the end-to-end benchmarks share around their in-process controller: simulated SSH devices
 * and agents as processes of their own, and the driver-only floor an end-to-end run is compared with.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { mapLimit, Semaphore } from '../../shared/src/jobs/limit';
import { until } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { spawnTs, tsNodeFlags, waitUntil, type Proc } from '../helpers/processes';
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

/** What a floor answers: its time and failures, what the agents would have sent back (for the protocol floor), the records parsed. */
export type FloorRun = Awaited<ReturnType<typeof driverFloor>> & { results: unknown[]; records: number };

/** A benchmark's floor work (floor-work.ts) on every target, in this process. */
export async function runFloorWork(name: FloorWorkName, targets: DeviceTarget[], limits: { sessions: number; connects: number }): Promise<FloorRun> {
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

let floorChild: ChildProcess | null = null;
let floorCalls = 0;
const floorAnswers = new Map<number, { resolve(run: FloorRun): void; reject(err: Error): void }>();

/**
 * The floor's process (floor-process.ts), started on first use: a process of its own, like the
 * agents, not the benchmark's, which is the controller's. Run there, the floor's driver code
 * changed the type feedback of code the controller shares with it (Node's streams, sockets,
 * buffers), and the controller compiled that code again every round, as no production controller does.
 */
function floorProcess(): ChildProcess {
  if (floorChild) return floorChild;
  const child = fork(join(import.meta.dirname, 'floor-process.ts'), [], { execArgv: tsNodeFlags(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.on('message', (m: FloorRun & { call: number }) => {
    floorAnswers.get(m.call)?.resolve(m);
    floorAnswers.delete(m.call);
    if (floorAnswers.size === 0) child.channel?.unref(); // idle: it keeps no benchmark from ending
  });
  child.on('exit', (code) => {
    floorChild = null;
    for (const answer of floorAnswers.values()) answer.reject(new Error(`the floor's process exited with ${code} during a floor`));
    floorAnswers.clear();
  });
  floorChild = child;
  return child;
}

/** The floor's process, for CPU metering (none while the floor runs in this process). */
export const floorPids = (): number[] => (floorChild?.pid ? [floorChild.pid] : []);

/**
 * The floor of a benchmark: its floor work on every target, in the floor's own process
 * (BENCH_FLOOR_IN_PROCESS=1: in this one, as before, for comparison).
 */
export async function workFloor(name: FloorWorkName, targets: DeviceTarget[], limits: { sessions: number; connects: number }): Promise<FloorRun> {
  if (process.env.BENCH_FLOOR_IN_PROCESS) return runFloorWork(name, targets, limits);
  const child = floorProcess();
  const call = ++floorCalls;
  child.channel?.ref();
  return new Promise((resolve, reject) => {
    floorAnswers.set(call, { resolve, reject });
    child.send({ call, name, targets, limits });
  });
}
