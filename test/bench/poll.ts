/**
 * Discovery poll benchmark (`npm run bench -- poll --devices 1000 --agents 2`).
 *
 * End to end: simulated SSH devices (`npm run sim`, its own process, each answering the six
 * discovery show commands), a controller on a fresh PostgreSQL database (this process), NATS
 * JetStream and `--agents` real `npm run agent` processes. The clock runs from the first
 * POST /api/devices/:id/poll to the last poll result stored with its records. The POSTs go
 * POST_IN_FLIGHT at a time (bounded concurrency, as a script or the scheduler would queue a
 * fleet), not one after another; the controller gathers the jobs of concurrent requests into
 * one submission, and each answers 202 once its job row is stored.
 *
 * Floor: the same devices polled by the SSH driver and the parsers alone (open, the dialect's
 * show commands, parse, close), in this one process, at the agents' total concurrency.
 *
 * Options: --devices N (1000), --agents N (2), --concurrency N per agent (32), --via post|schedule
 * (post: one POST /poll per device, the default; schedule: poll_enabled on every device, all due
 * at once, claimed and submitted in batches by the background scheduler), --warmup-rounds N (3).
 * Target: end-to-end / floor ≤ RATIO_TARGET.nats (report.ts).
 */
import { randomBytes } from 'node:crypto';
import { mapLimit } from '../../shared/src/jobs/limit';
import { dropNatsNamespace, until as waitFor } from '../agents/helpers';
import { ADMIN } from '../helpers/controller';
import { benchController, option } from './controller';
import { cpuMeter, cpuOfNamed, processCpu, selfCpu } from './cpu';
import { connectSlotsOf, DEVICE_LOGIN, NATS_URL, simTargets, floorPids, workFloor, startAgents, startSshSim } from './fleet';
import { pipelineFloor, pipelineFloorReport } from './pipeline-floor';
import { protocolFloor, protocolFloorReport } from './protocol-floor';
import { loadAverageLine, PIPELINE_TARGET, RATIO_TARGET } from './report';

/** POST /poll requests in flight at once. */
const POST_IN_FLIGHT = 32;

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const agentCount = option(args, 'agents', 2);
  const concurrency = option(args, 'concurrency', 32);
  const warmupRounds = option(args, 'warmup-rounds', 3);
  const via = args.includes('--via') ? args[args.indexOf('--via') + 1] : 'post';
  if (via !== 'post' && via !== 'schedule') throw new Error('--via must be post or schedule');
  const prefix = `bench${randomBytes(4).toString('hex')}`;

  const c = await benchController({ natsUrl: NATS_URL, natsPrefix: prefix, discovery: { scheduler: via === 'schedule', tickMs: 200 } });
  const { db } = c;
  const call = (method: string, path: string, token: string | null, body?: string, type?: string) => c.request(method, path, token, body, type);

  const sim = await startSshSim(devices);
  let agents: Awaited<ReturnType<typeof startAgents>> = [];
  try {
    const { access_token: token } = await call('POST', '/api/auth/login', null, JSON.stringify(ADMIN));
    const profile = await call('POST', '/api/profiles', token, JSON.stringify({ name: 'bench', ...DEVICE_LOGIN, ssh_port: sim.port }));
    const summary = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, sim.csv, 'text/csv');
    if (summary.imported !== devices)
      throw new Error(`import stored ${summary.imported} of ${devices} devices: ${JSON.stringify(summary.errors.slice(0, 3))}`);
    const rows: { id: string; name: string; host: string; device_type: string }[] = await db('devices').select('id', 'name', 'host', 'device_type');
    agents = await startAgents(c, token, agentCount, concurrency);

    /** Forgets earlier rounds' polls and records (not timed, not counted). */
    const reset = async () => {
      await db('discovery_sections').delete();
      await db('discovery_polls').delete();
      await db('devices').update({ poll_enabled: false, next_poll_at: null });
    };
    const endToEnd = async () => {
      const [{ now: before }] = (await db.raw('SELECT clock_timestamp() AS now')).rows;
      const started = performance.now();
      const windowStart = process.hrtime.bigint() / 1000n;
      if (via === 'post') await mapLimit(rows, POST_IN_FLIGHT, (r) => call('POST', `/api/devices/${r.id}/poll`, token));
      else await db('devices').update({ poll_enabled: true, poll_interval_minutes: 10080, next_poll_at: db.fn.now() });
      const queuedS = (performance.now() - started) / 1000;
      await waitFor(
        'the polls to be queued',
        async () => {
          const [{ n }] = (await db.raw('SELECT count(*)::int AS n FROM discovery_polls')).rows;
          return n === rows.length;
        },
        900_000,
        100,
      );
      await waitFor(
        'every poll to finish',
        async () => {
          const [{ open }] = (await db.raw("SELECT count(*)::int AS open FROM discovery_polls WHERE status = 'queued'")).rows;
          return open === 0;
        },
        900_000,
        250,
      ); // the end comes from the database, so polling gently costs no accuracy
      const [{ last }] = (await db.raw('SELECT max(finished_at) AS last FROM discovery_polls')).rows;
      const seconds = (new Date(last).getTime() - new Date(before).getTime()) / 1000;
      if (process.env.BENCH_DEBUG) {
        // Per half second: jobs stored, jobs on an agent (started, result not yet recorded), results recorded.
        const { rows: timeline } = await db.raw(
          `SELECT t, (SELECT count(*) FROM jobs WHERE kind = 'poll' AND created_at >= ? AND created_at < ?::timestamptz + t * interval '1 s')::int AS stored,
                  (SELECT count(*) FROM jobs WHERE kind = 'poll' AND created_at >= ? AND started_at < ?::timestamptz + t * interval '1 s'
                     AND finished_at >= ?::timestamptz + t * interval '1 s')::int AS running,
                  (SELECT count(*) FROM jobs WHERE kind = 'poll' AND created_at >= ? AND finished_at < ?::timestamptz + t * interval '1 s')::int AS recorded
             FROM generate_series(0.5, ?::numeric + 0.5, 0.5) AS t`,
          [before, before, before, before, before, before, before, seconds],
        );
        // The monotonic clock of V8 CPU profiles (SB_CPU_PROF_DIR or --cpu-prof), to read only this run's samples.
        console.log(`  profile window (µs): ${windowStart},${process.hrtime.bigint() / 1000n}; POSTs answered by ${queuedS.toFixed(2)} s`);
        console.log(
          `  timeline (s: stored/running/recorded): ` +
            timeline
              .map((r: { t: number; stored: number; running: number; recorded: number }) => `${r.t}:${r.stored}/${r.running}/${r.recorded}`)
              .join(' '),
        );
      }
      const byStatus = (await db.raw('SELECT status, count(*)::int AS n FROM discovery_polls GROUP BY status')).rows as {
        status: string;
        n: number;
      }[];
      const [{ n: records }] = (await db.raw('SELECT COALESCE(sum(jsonb_array_length(records)), 0)::int AS n FROM discovery_sections')).rows;
      return { seconds, queuedS, byStatus, records };
    };

    console.log(
      `poll benchmark: ${devices} simulated vendor_ios devices, ${agentCount} agent(s) × ${concurrency} sessions, NATS ${NATS_URL}, polls ` +
        `queued by ${via === 'post' ? 'POST /api/devices/:id/poll' : 'the background scheduler'}`,
    );
    // CPU seconds per process: this process is the controller (and the client sending the POSTs); the floor's driver runs in a process of its own.
    const meter = () =>
      cpuMeter({
        agents: processCpu(() => agents.map((a) => a.pid)),
        simulator: processCpu(() => [sim.proc.pid]),
        'this process': selfCpu,
        postgres: () => cpuOfNamed('postgres'),
        'nats-server': () => cpuOfNamed('nats-server'),
        floor: processCpu(floorPids),
      });
    // Warm-up, not timed: each path polls every device `--warmup-rounds` times first, so that all
    // processes meet the timed round warm (see the deploy benchmark).
    const targets = simTargets(rows, sim.port);
    const limits = { sessions: concurrency * agentCount, connects: connectSlotsOf(concurrency) * agentCount };
    let warm = { seconds: 0 };
    for (let i = 0; i < warmupRounds; i++) {
      await reset();
      warm = await endToEnd();
      await workFloor('poll', targets, limits);
    }
    await reset();
    let counting = meter();
    const e2e = await c.statementTimes.around('the run, end to end', () => endToEnd());
    const e2eCpu = counting(devices).text;
    counting = meter();
    const floor = await workFloor('poll', targets, limits);
    const floorCpu = counting(devices);
    const protocol = await protocolFloor(db, NATS_URL, floor.results, limits.sessions);

    const ratio = e2e.seconds / floor.seconds;
    console.log(`last warm-up round: ${warm.seconds.toFixed(2)} s`);
    const how =
      via === 'post'
        ? `all ${devices} POSTs, ${POST_IN_FLIGHT} in flight, answered after ${e2e.queuedS.toFixed(2)} s`
        : 'from the moment all became due';
    console.log(
      `end to end: ${e2e.seconds.toFixed(2)} s, ${(devices / e2e.seconds).toFixed(1)} polls/s (${how}); ` +
        `results ${e2e.byStatus.map((s) => `${s.status} ${s.n}`).join(', ')}; ${e2e.records} records stored`,
    );
    console.log(
      `driver-only floor: ${floor.seconds.toFixed(2)} s, ${(devices / floor.seconds).toFixed(1)} polls/s (${floor.failed} failed, ` +
        `${floor.records} records parsed)`,
    );
    console.log(`ratio end-to-end / floor: ${ratio.toFixed(2)} (target ≤ ${RATIO_TARGET.nats})`);
    console.log(`  CPU s end to end: ${e2eCpu}`);
    console.log(`  CPU s of the floor: ${floorCpu.text}`);
    console.log(protocolFloorReport({ seconds: floor.seconds, cpuSeconds: floorCpu.total }, protocol, devices));
    const pipeline = await pipelineFloor(db, NATS_URL, targets, {
      work: 'poll',
      agents: agentCount,
      sessions: concurrency,
      connects: connectSlotsOf(concurrency),
      simulatorPid: sim.proc.pid,
      warmupRounds,
    });
    console.log(pipelineFloorReport(pipeline, floor.seconds, agentCount));
    console.log(`end to end / pipeline floor: ${(e2e.seconds / pipeline.seconds).toFixed(2)} (within 10 %: ≤ ${PIPELINE_TARGET})`);
    console.log(`${loadAverageLine()} (postgres and nats-server are counted machine-wide)`);
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await sim.proc.stop();
    await c.close();
    await dropNatsNamespace(NATS_URL, prefix).catch(() => undefined);
  }
}
