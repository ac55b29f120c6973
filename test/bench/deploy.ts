/**
 * Deployment benchmark (`npm run bench -- deploy --devices 500 [--agents 1] [--concurrency 32]
 * [--rounds 1] [--warmup-rounds 3] [--transport nats|inprocess] [--count-requests]`).
 *
 * End to end: simulated gNMI targets (their own process), a controller on a fresh PostgreSQL
 * database (this process), and `--agents` real `npm run agent` processes over NATS JetStream
 * (or, with --transport inprocess, one agent runtime inside this process). The clock runs from
 * POST /api/config/deployments of a two-service stack on every device to the deployment's
 * completed_at: render, checks, jobs, per device a backup over gNMI stored as a config version,
 * one SetRequest with both services, a verifying read, and the outcome recorded.
 *
 * Floor: the gNMI driver alone against the same targets, in this process, at the same
 * concurrency as the agents together: open, fetch (backup), apply both services, fetch
 * (verify), close.
 *
 * --count-requests (nats): a plain NATS subscriber of the agents' request subject, in this
 * process, counts each round's backup_store requests and the jobs' backups they carry (off by
 * default: its CPU would count as the controller's).
 *
 * Target (2-core machine): end-to-end / floor ≤ RATIO_TARGET.nats (report.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { mapLimit } from '../../shared/src/jobs/limit';
import { unverifiedPayload } from '../../shared/src/jobs/crypto';
import { deleteStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';
import { until } from '../agents/helpers';
import { freePort } from '../helpers/net';
import { spawnAgent, spawnTs, type Proc } from '../helpers/processes';
import { loopbackAddress } from '../sim/loopback';
import { benchController, option } from './controller';
import { cpuMeter, cpuOfNamed, processCpu, selfCpu } from './cpu';
import { NATS_URL, floorPids, workFloor } from './fleet';
import { DEPLOY_PATHS } from './floor-work';
import { persistenceFloor } from './persistence-floor';
import { pipelineFloor, pipelineFloorReport } from './pipeline-floor';
import { protocolFloor, protocolFloorReport } from './protocol-floor';
import { printClosing, printRound, RATIO_TARGET, ROUND_HEADER, type RoundTimes } from './report';

const LOGIN = { username: 'netops', password: 'bench-Device-pw' };
const INITIAL_TREE = {
  system: { config: { hostname: 'factory', 'domain-name': 'example.net' } },
  interfaces: { interface: [{ name: 'Ethernet1', config: { mtu: 1500, description: '' } }] },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SYSTEM = { name: 'system', target_path: DEPLOY_PATHS.system, source: '{"hostname": "{{ hostname }}", "domain-name": "{{ domain }}"}' };
const INTERFACES = {
  name: 'interfaces',
  target_path: DEPLOY_PATHS.interfaces,
  source:
    '{"interface": [{% for i in interfaces %}{"name": "{{ i.name }}", "config": {"mtu": {{ i.mtu | default(mtu) }}, "description": "{{ ' +
    'i.description }}"}}{% if not loop.last %}, {% endif %}{% endfor %}]}',
};

/** SIGTERM, then SIGKILL if it does not exit within 5 s. */
async function stop(proc: Proc): Promise<void> {
  await Promise.race([proc.kill('SIGTERM'), sleep(5_000).then(() => proc.kill('SIGKILL'))]);
}

/**
 * The gNMI targets in a process of their own (this file run with SB_BENCH_GNMI_SIM=N), one
 * loopback address each on one port, so every device shares one connection profile as a real
 * fleet does; resolves with the port and the addresses.
 */
async function startSimProcess(devices: number): Promise<{ port: number; hosts: string[]; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const sim = spawnTs('test/bench/deploy.ts', { SB_BENCH_GNMI_SIM: String(devices), SB_BENCH_GNMI_PORT: String(port) });
  const line = await until(
    'the gNMI simulator',
    () => {
      if (sim.child.exitCode !== null) throw new Error(`simulator exited: ${sim.output()}`);
      return sim
        .output()
        .split('\n')
        .find((l) => l.startsWith('HOSTS '));
    },
    120_000,
  );
  return { port, hosts: JSON.parse(line.slice(6)) as string[], pid: sim.child.pid ?? -1, stop: () => stop(sim) };
}

/** Child side of startSimProcess. */
async function simMain(devices: number, port: number): Promise<void> {
  const { startGnmiFleet } = await import('../sim/gnmi/target');
  const fleet = await startGnmiFleet(devices, (i) => ({ ...LOGIN, initialTree: INITIAL_TREE, host: loopbackAddress(i), port }));
  console.log(`HOSTS ${JSON.stringify(fleet.targets.map((t) => t.host))}`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await fleet.close();
}

function variableValues(ids: string[], names: Map<string, string>) {
  const perDevice = (build: (id: string, i: number) => Record<string, unknown>) => Object.fromEntries(ids.map((id, i) => [id, build(id, i)]));
  return {
    '0': { devices: ids, shared_vars: { domain: 'dc1.example.net' }, device_vars: perDevice((id) => ({ hostname: names.get(id) })) },
    '1': {
      devices: ids,
      shared_vars: { mtu: 9214 },
      device_vars: perDevice((_id, i) => ({ interfaces: [1, 2, 3, 4].map((p) => ({ name: `Ethernet${p}`, description: `uplink ${p} of ${i}` })) })),
    },
  };
}

/**
 * What the target leaves once the pipeline floor (the driver work plus the protocol) and the
 * persistence floor (the rows) are paid: every core busy for RATIO_TARGET times the floor's time is the
 * most CPU a run meeting the target can use, so (pipeline + persistence CPU) / cores / floor time
 * is the lowest ratio any implementation of this design can reach here.
 */
function budgetReport(
  floorSeconds: number,
  floorCpu: number,
  pipelineCpu: number,
  persistence: { cpuSeconds: number; text: string },
  devices: number,
): string {
  const cores = availableParallelism();
  const target = RATIO_TARGET.nats;
  const budget = cores * target * floorSeconds;
  const perDevice = (s: number) => `${((s * 1000) / devices).toFixed(2)} ms per device`;
  const left = budget - pipelineCpu;
  return [
    `  persistence floor (per device a job row inserted and finished, the backup as a config version, the device's state, one log line; in ` +
      `bulk, one statement per step for all devices): ${persistence.cpuSeconds.toFixed(2)} CPU s, ${perDevice(persistence.cpuSeconds)} (${persistence.text})`,
    `  CPU budget at ratio ${target}: ${cores} cores × ${target} × ${floorSeconds.toFixed(2)} s = ${budget.toFixed(1)} CPU s; the floor's own work ` +
      `${floorCpu.toFixed(1)}, the pipeline floor ${pipelineCpu.toFixed(1)}, ` +
      `leaving ${left.toFixed(2)} CPU s (${perDevice(left)}) for everything else, of which the persistence floor alone takes ` +
      `${persistence.cpuSeconds.toFixed(2)}`,
    `  lowest ratio of this design here (pipeline + persistence floor CPU on every core, against the floor's time): ` +
      `${((pipelineCpu + persistence.cpuSeconds) / cores / floorSeconds).toFixed(2)}`,
  ].join('\n');
}

/** Counts the backup_store requests on the agents' request subject, and the jobs' backups in them. */
async function backupRequestCounter(prefix: string): Promise<{ take(): string; close(): Promise<void> }> {
  const nc = await connect({ servers: NATS_URL });
  let requests = 0;
  let backups = 0;
  nc.subscribe(natsNames(prefix).heartbeatSubject, {
    callback: (_err, msg) => {
      const payload = unverifiedPayload(msg.string()) as { type?: string; backups?: unknown[] } | null;
      if (payload?.type !== 'backup_store') return;
      requests += 1;
      backups += payload.backups?.length ?? 1;
    },
  });
  return {
    take() {
      const text = `${requests} backup_store requests carrying ${backups} jobs' backups (${(backups / Math.max(1, requests)).toFixed(1)} a request)`;
      requests = backups = 0;
      return text;
    },
    close: () => nc.close(),
  };
}

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 500);
  const agentCount = option(args, 'agents', 1);
  const concurrency = option(args, 'concurrency', 32);
  const rounds = option(args, 'rounds', 1);
  const warmupRounds = option(args, 'warmup-rounds', 3);
  const at = args.indexOf('--transport');
  const transport = at >= 0 ? args[at + 1] : 'nats';
  if (transport !== 'nats' && transport !== 'inprocess') throw new Error('--transport must be nats or inprocess');
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const counter = transport === 'nats' && args.includes('--count-requests') ? await backupRequestCounter(prefix) : null;
  const sim = await startSimProcess(devices);
  const c = await benchController(transport === 'nats' ? { natsUrl: NATS_URL, natsPrefix: prefix } : {});
  const agents: { pid?: number; stop(): Promise<void>; metrics?: string }[] = [];
  try {
    // One profile for the fleet, a device per target; not timed.
    const ids: string[] = [];
    const names = new Map<string, string>();
    const targets: DeviceTarget[] = [];
    const profile = (await c.call('POST', '/api/profiles', { name: 'gnmi-fleet', ...LOGIN, gnmi_port: sim.port, automation_transport: 'gnmi' })).body;
    await mapLimit(
      sim.hosts.map((host, i) => ({ host, i })),
      16,
      async ({ host, i }) => {
        const device = (await c.call('POST', '/api/devices', { name: `leaf${i}`, host, device_type: 'vendor_eos', profile_id: profile.id })).body;
        ids[i] = device.id;
        names.set(device.id, device.name);
        targets[i] = {
          id: device.id,
          name: device.name,
          host,
          device_type: 'vendor_eos',
          credentials: { ...LOGIN },
          ports: { ssh: 22, netconf: 830, gnmi: sim.port },
          gnmi_tls: false,
          gnmi_skip_verify: false,
        };
      },
    );
    const templates = [];
    for (const s of [SYSTEM, INTERFACES]) {
      templates.push(
        (
          await c.call('POST', '/api/config/templates', {
            name: s.name,
            platform: 'openconfig-gnmi',
            config_format: 'json',
            target_path: s.target_path,
            source: s.source,
          })
        ).body,
      );
    }
    const stack = (
      await c.call('POST', '/api/config/stacks', {
        name: 'fabric',
        atomic: true,
        services: templates.map((t, order) => ({ template_id: t.id, order })),
      })
    ).body;

    if (transport === 'nats') {
      for (let i = 0; i < agentCount; i++) {
        const created = (await c.call('POST', '/api/agents', { name: `bench-agent-${i + 1}`, site_id: null })).body;
        const healthPort = await freePort();
        const proc = spawnAgent({
          NATS_URL,
          SWITCHBOARD_URL: c.base,
          SWITCHBOARD_ENROLL_TOKEN: created.enrollment_token,
          SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-bench-agent-')),
          SWITCHBOARD_AGENT_CONCURRENCY: String(concurrency),
          // Its ops server, for the backup_store round trips it measured (switchboard_agent_request_seconds).
          SWITCHBOARD_AGENT_HEALTH_PORT: String(healthPort),
        });
        agents.push({ pid: proc.child.pid, stop: () => stop(proc), metrics: `http://127.0.0.1:${healthPort}/metrics` });
      }
    } else {
      const { enroll } = await import('../../agent/src/identity');
      const { AgentRuntime } = await import('../../agent/src/runtime');
      const { DRIVERS } = await import('../../agent/src/drivers');
      const pino = (await import('pino')).default;
      const created = (await c.call('POST', '/api/agents', { name: 'bench-agent', site_id: null })).body;
      const identity = await enroll(
        {
          controllerUrl: c.base,
          enrollToken: created.enrollment_token,
          natsUrl: NATS_URL,
          stateDir: mkdtempSync(join(tmpdir(), 'sb-bench-agent-')),
          concurrency,
          connectConcurrency: Math.min(concurrency, 16),
          logLevel: 'silent',
        },
        'bench',
        ['job:deploy', 'job:rollback', 'transport:gnmi'],
      );
      const hub = c.app.services.jobEngine.transport as import('../../shared/src/jobs/inprocess').InProcessHub;
      const runtime = new AgentRuntime({
        identity,
        link: hub.link(identity.org_id, identity.pool),
        drivers: DRIVERS,
        concurrency,
        connectConcurrency: Math.min(concurrency, 16),
        version: 'bench',
        log: pino({ level: 'silent' }),
      });
      await runtime.start();
      agents.push({ stop: () => runtime.stop(2_000) });
    }
    await until(
      'the agents to come online',
      async () => {
        const list = (await c.call('GET', '/api/agents')).body;
        return list.agents.filter((a: { status: string }) => a.status === 'online').length >= agents.length;
      },
      60_000,
      200,
    );

    /** One deployment of the stack on `subset`; seconds from the API call to completed_at. */
    const endToEnd = async (subset: string[]) => {
      const [{ now: before }] = (await c.db.raw('SELECT clock_timestamp() AS now')).rows;
      const started = performance.now();
      const windowStart = process.hrtime.bigint() / 1000n;
      const created = (
        await c.call('POST', '/api/config/deployments', {
          stack_id: stack.id,
          name: 'bench',
          target_devices: subset.map((device_id) => ({ device_id })),
          variable_values: variableValues(subset, names),
        })
      ).body;
      const acceptedMs = performance.now() - started;
      // A round far beyond its usual second or two: say what is still open while it lasts.
      const watch = [5_000, 15_000, 30_000].map((ms) => setTimeout(() => void stallReport(c, created.id, ms), ms));
      const done = await until(
        'the deployment to end',
        async () => {
          const row = await c
            .db('deployments')
            .where({ id: created.id })
            .first('status', 'completed_at', 'succeeded_count', 'failed_count', 'error_message');
          return ['completed', 'failed'].includes(row.status) ? row : null;
        },
        600_000,
        250,
      ); // the end time comes from the database, so polling gently costs no accuracy
      watch.forEach(clearTimeout);
      if (done.failed_count > 0) {
        const sample = await c
          .db('deployment_devices')
          .where({ deployment_id: created.id })
          .whereNotNull('error_message')
          .first('device_name', 'status', 'error_message');
        console.log(
          `  deployment ${done.status}: ${done.error_message}; for example ${sample?.device_name} (${sample?.status}): ${sample?.error_message}`,
        );
      }
      const [p] = (
        await c.db.raw(
          'SELECT max(created_at) AS submitted, min(started_at) AS first_start, max(started_at) AS last_start, max(finished_at) AS ' +
            'last_finish FROM jobs WHERE group_id = ?',
          [created.id],
        )
      ).rows;
      if (process.env.BENCH_DEBUG) {
        const [d] = (
          await c.db.raw(
            `SELECT avg(extract(epoch FROM finished_at - started_at))::float AS run_s, avg(extract(epoch FROM started_at - created_at))::float AS wait_s,
                  avg(extract(epoch FROM dispatched_at - created_at))::float AS dispatch_s FROM jobs WHERE group_id = ?`,
            [created.id],
          )
        ).rows;
        console.log(
          `  jobs: mean run ${d.run_s?.toFixed(2)} s on the agent, mean wait ${d.wait_s?.toFixed(2)} s from submit to start, mean dispatch ` +
            `${d.dispatch_s?.toFixed(2)} s`,
        );
        // The monotonic clock of V8 CPU profiles (SB_CPU_PROF_DIR), to read only this run's samples.
        console.log(`  profile window (µs): ${windowStart},${process.hrtime.bigint() / 1000n}`);
      }
      const sec = (t: Date | string | null) => (t ? ((new Date(t).getTime() - new Date(before).getTime()) / 1000).toFixed(2) : '-');
      return {
        id: created.id as string,
        seconds: (new Date(done.completed_at).getTime() - new Date(before).getTime()) / 1000,
        acceptedMs,
        done,
        phases:
          `jobs submitted ${sec(p.submitted)} s, agents started ${sec(p.first_start)}–${sec(p.last_start)} s, last job final ` +
          `${sec(p.last_finish)} s, completed ${sec(done.completed_at)} s`,
      };
    };
    const sessions = agents.length * concurrency;
    const connects = agents.length * Math.min(concurrency, 16);
    const measured = ids.slice(0, devices);
    // Warm-up, not timed: every path first runs the measured devices' work `--warmup-rounds`
    // times (default 3), so the controller, the agents and the floor's process all meet the timed
    // round warm, as long-running processes are. A fresh process's first rounds of these 500
    // sessions cost far more CPU (the floor alone: 2.5-3.4, 1.9-2.4, then 1.3-1.65 CPU s), so a
    // short warm-up compared a colder path with a warmer one.
    for (let i = 0; i < warmupRounds; i++) {
      const warmRun = await endToEnd(ids.slice(0, devices));
      if (warmRun.done.status !== 'completed') throw new Error(`warm-up deployment ${warmRun.done.status}: ${warmRun.done.error_message}`);
      await workFloor('deploy', targets.slice(0, devices), { sessions, connects });
    }

    console.log(
      `deploy benchmark: ${devices} simulated gNMI targets, two-service stack (backup, one SetRequest, verify), ${agents.length} agent(s) × ` +
        `concurrency ${concurrency}, transport ${transport}`,
    );
    console.log(ROUND_HEADER);
    const meter = () =>
      cpuMeter({
        agents: processCpu(() => agents.flatMap((a) => (a.pid ? [a.pid] : []))),
        simulator: processCpu(() => [sim.pid]),
        controller: selfCpu,
        postgres: () => cpuOfNamed('postgres'),
        'nats-server': () => cpuOfNamed('nats-server'),
        floor: processCpu(floorPids),
      });
    const cpuNotes: string[] = [];
    counter?.take();
    const times: RoundTimes[] = [];
    for (let round = 1; round <= rounds; round++) {
      let counting = meter();
      const before = await agentTimes(agents);
      const e2e = await c.statementTimes.around(`round ${round}, end to end`, () => endToEnd(measured));
      cpuNotes.push(`  CPU s of round ${round}, end to end: ${counting(devices).text}`);
      const after = await agentTimes(agents);
      const trips = meanMs(before.trips, after.trips);
      const jobs = meanMs(before.jobs, after.jobs);
      const calls = CALLS.map((call) => `${call} ${meanMs(before.calls[call], after.calls[call])?.ms ?? '-'}`).join(', ');
      if (trips && jobs)
        cpuNotes.push(
          `  as the agents measured round ${round}: deploy jobs ${jobs.ms} ms mean from start to result (${jobs.n} jobs), ` +
            `backup_store round trips ${trips.ms} ms mean (${trips.n} requests); gNMI calls, ms mean: ${calls}`,
        );
      if (counter) cpuNotes.push(`  requests of round ${round}, end to end: ${counter.take()}`);
      counting = meter();
      const floor = await workFloor('deploy', targets.slice(0, devices), { sessions, connects });
      const floorCpu = counting(devices);
      cpuNotes.push(`  CPU s of round ${round}, floor (floor = the driver's process): ${floorCpu.text}`);
      let pipelineSeconds: number | undefined;
      // BENCH_SKIP_REFS=1: only the floor, not these three, which run in this process (the controller's): for profiling the controller alone.
      if (transport === 'nats' && !process.env.BENCH_SKIP_REFS) {
        const protocol = await protocolFloor(c.db, NATS_URL, floor.results, sessions);
        cpuNotes.push(protocolFloorReport({ seconds: floor.seconds, cpuSeconds: floorCpu.total }, protocol, devices));
        const pipeline = await pipelineFloor(c.db, NATS_URL, targets.slice(0, devices), {
          work: 'deploy',
          agents: agents.length,
          sessions: concurrency,
          connects: Math.min(concurrency, 16),
          simulatorPid: sim.pid,
          warmupRounds,
        });
        cpuNotes.push(pipelineFloorReport(pipeline, floor.seconds, agents.length));
        pipelineSeconds = pipeline.seconds;
        const backups = floor.results.map((r) => (r as { backup: { text: string; format: string } }).backup);
        const persistence = await persistenceFloor(c.db, e2e.id, new Map(measured.map((id, i) => [id, backups[i % backups.length]])));
        cpuNotes.push(budgetReport(floor.seconds, floorCpu.total, pipeline.cpuSeconds, persistence, devices));
      }
      times.push(
        printRound({
          round,
          devices,
          pipeline: pipelineSeconds,
          e2e,
          outcomes: [e2e.done.succeeded_count, e2e.done.failed_count],
          floor,
          notes: cpuNotes.splice(0),
        }),
      );
    }
    printClosing(`ratio (end to end / floor) ≤ ${RATIO_TARGET.nats}`, times);
  } finally {
    await counter?.close();
    await Promise.all(agents.map((a) => a.stop()));
    await sim.stop();
    await c.close();
    if (transport === 'nats') {
      const nc = await connect({ servers: NATS_URL }).catch(() => null);
      if (nc) {
        await deleteStreams(await nc.jetstreamManager(), natsNames(prefix)).catch(() => undefined);
        await nc.close();
      }
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sim = process.env.SB_BENCH_GNMI_SIM;
  const main = sim ? simMain(Number(sim), Number(process.env.SB_BENCH_GNMI_PORT)) : run(process.argv.slice(2));
  main.then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** What a round that runs far too long is waiting for: its open jobs, the streams, its devices by status. */
async function stallReport(c: Awaited<ReturnType<typeof benchController>>, deploymentId: string, afterMs: number): Promise<void> {
  const jobs: { status: string; attempt: number }[] = await c
    .db('jobs')
    .where({ group_id: deploymentId })
    .whereNotIn('status', ['succeeded', 'failed'])
    .select('status', 'attempt');
  const transport = c.app.services.jobEngine.transport as { depth?: () => Promise<unknown> };
  const depth = await transport.depth?.().catch((err: Error) => err.message);
  const devices: { status: string; n: number }[] = await c
    .db('deployment_devices')
    .where({ deployment_id: deploymentId })
    .groupBy('status')
    .select('status', c.db.raw('count(*)::int AS n'));
  const count = (list: string[]) => JSON.stringify(list.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {}));
  console.log(
    `  still running after ${afterMs / 1000} s: open jobs ${count(jobs.map((j) => `${j.status}@${j.attempt}`))}; ` +
      `streams ${JSON.stringify(depth ?? 'in process')}; devices ${JSON.stringify(Object.fromEntries(devices.map((d) => [d.status, d.n])))}`,
  );
}

/** The device calls whose time the agents' line shows (switchboard_agent_device_call_seconds). */
const CALLS = ['open', 'fetchConfig', 'apply'] as const;

/**
 * Seconds in all and how many: the agents' answered backup_store round trips, their deploy jobs
 * (start to result stored) and their gNMI sessions' calls.
 */
interface AgentTimes {
  trips: { sum: number; count: number };
  jobs: { sum: number; count: number };
  calls: Record<(typeof CALLS)[number], { sum: number; count: number }>;
}

/** What the agents' ops servers have counted so far. */
async function agentTimes(agents: { metrics?: string }[]): Promise<AgentTimes> {
  const zero = () => ({ sum: 0, count: 0 });
  const total: AgentTimes = {
    trips: zero(),
    jobs: zero(),
    calls: { open: zero(), fetchConfig: zero(), apply: zero() },
  };
  const add = (into: { sum: number; count: number }, text: string, pattern: RegExp) => {
    for (const [, part, value] of text.matchAll(pattern)) into[part as 'sum' | 'count'] += Number(value);
  };
  for (const { metrics } of agents) {
    if (!metrics) continue;
    const text = await fetch(metrics)
      .then((r) => r.text())
      .catch(() => '');
    add(total.trips, text, /^switchboard_agent_request_seconds_(sum|count)\{[^}]*type="backup_store"[^}]*answered="yes"[^}]*\} (\S+)$/gm);
    add(total.jobs, text, /^switchboard_agent_job_duration_seconds_(sum|count)\{[^}]*kind="deploy"[^}]*\} (\S+)$/gm);
    for (const call of CALLS)
      add(total.calls[call], text, new RegExp(`^switchboard_agent_device_call_seconds_(sum|count)\\{[^}]*call="${call}"[^}]*\\} (\\S+)$`, 'gm'));
  }
  return total;
}

/** The mean in ms of what was counted between two readings, or null when nothing was. */
function meanMs(before: { sum: number; count: number }, after: { sum: number; count: number }): { n: number; ms: string } | null {
  const n = after.count - before.count;
  return n > 0 ? { n, ms: ((1000 * (after.sum - before.sum)) / n).toFixed(1) } : null;
}
