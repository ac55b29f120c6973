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
 * Options: --devices N (1000), --agents N (2), --concurrency N per agent (32), --rounds N (1),
 * --warmup-rounds N (3), --embedded thread|main-thread: the embedded default of `npm start` instead
 * (PGlite and the built-in agent in this process, no NATS; see embedded.ts), which prints the event
 * loop's busy time per thread too.
 * Targets (2-core machine): 1,000 devices in ≤ 30 s end to end; end-to-end / floor as RATIO_TARGET (report.ts).
 */
import { randomBytes } from 'node:crypto';
import { dropNatsNamespace, until as waitFor } from '../agents/helpers';
import { ADMIN } from '../helpers/controller';
import { benchController, option } from './controller';
import { cpuMeter, cpuOfNamed, processCpu, selfCpu } from './cpu';
import { connectSlotsOf, DEVICE_LOGIN, NATS_URL, simTargets, floorPids, workFloor, startAgents, startSshSim } from './fleet';
import { busyMeter, embeddedModeOf, startEmbeddedAgent, type EmbeddedAgent } from './embedded';
import { pipelineFloor, pipelineFloorReport } from './pipeline-floor';
import { protocolFloor, protocolFloorReport } from './protocol-floor';
import { printClosing, printRound, RATIO_TARGET, ROUND_HEADER, type RoundTimes } from './report';

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const embedded = embeddedModeOf(args);
  const agentCount = embedded ? 1 : option(args, 'agents', 2);
  const concurrency = option(args, 'concurrency', 32);
  const rounds = option(args, 'rounds', 1);
  const warmupRounds = option(args, 'warmup-rounds', 3);
  const prefix = `bench${randomBytes(4).toString('hex')}`;

  const c = await benchController(embedded ? {} : { natsUrl: NATS_URL, natsPrefix: prefix }, { embedded: embedded !== null });
  const { db } = c;
  const call = (method: string, path: string, token: string | null, body?: string, type?: string) => c.request(method, path, token, body, type);

  const sim = await startSshSim(devices);
  const simPort = sim.port;
  let agents: Awaited<ReturnType<typeof startAgents>> = [];
  let embeddedAgent: EmbeddedAgent | null = null;
  try {
    const { access_token: token } = await call('POST', '/api/auth/login', null, JSON.stringify(ADMIN));
    const profile = await call('POST', '/api/profiles', token, JSON.stringify({ name: 'bench', ...DEVICE_LOGIN, ssh_port: simPort }));
    const summary = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, sim.csv, 'text/csv');
    if (summary.imported !== devices)
      throw new Error(`import stored ${summary.imported} of ${devices} devices: ${JSON.stringify(summary.errors.slice(0, 3))}`);
    const rows: { id: string; name: string; host: string; device_type: string }[] = await db('devices').select('id', 'name', 'host', 'device_type');
    const ids = rows.map((r) => r.id);

    if (embedded) embeddedAgent = await startEmbeddedAgent(c, embedded, concurrency);
    else agents = await startAgents(c, token, agentCount, concurrency);

    /** One bulk pull of `subset`; seconds from the API call to the last stored version. */
    const endToEnd = async (subset: string[]) => {
      const [{ now: before }] = (await db.raw('SELECT clock_timestamp() AS now')).rows;
      const started = performance.now();
      const windowStart = process.hrtime.bigint() / 1000n;
      const answer = await call('POST', '/api/config/devices/bulk-pull', token, JSON.stringify({ device_ids: subset, method: 'cli' }));
      const acceptedMs = performance.now() - started;
      const snap = await waitFor(
        'the bulk pull to finish',
        async () => {
          const s = (await call('GET', `/api/devices/snapshots/${answer.snapshot_id}`, token)).snapshot;
          return s.status !== 'collecting' ? s : null;
        },
        600_000,
        250,
      ); // the end time comes from the database, so polling gently costs no accuracy
      const [{ last }] = (await db.raw('SELECT max(created_at) AS last FROM config_versions WHERE snapshot_id = ?', [answer.snapshot_id])).rows;
      const at = (t: Date | string | null) => (t ? ((new Date(t).getTime() - new Date(before).getTime()) / 1000).toFixed(2) : '-');
      const [p] = (
        await db.raw(
          `SELECT max(created_at) AS submitted, max(dispatched_at) AS dispatched, min(started_at) AS first_start,
                max(started_at) AS last_start, max(finished_at) AS last_finish FROM jobs WHERE group_id = ?`,
          [answer.snapshot_id],
        )
      ).rows;
      if (process.env.BENCH_DEBUG) {
        const perSecond = async (sql: string) =>
          (
            await db.raw(`SELECT floor(extract(epoch FROM t - ?::timestamptz))::int AS s, count(*)::int AS n FROM (${sql}) x GROUP BY 1 ORDER BY 1`, [
              before,
              answer.snapshot_id,
            ])
          ).rows
            .map((h: { s: number; n: number }) => `${h.s}:${h.n}`)
            .join(' ');
        console.log('  agent starts per second:', await perSecond('SELECT started_at AS t FROM jobs WHERE group_id = ?'));
        // The monotonic clock of V8 CPU profiles (SB_CPU_PROF_DIR), to read only this run's samples.
        console.log(`  profile window (µs): ${windowStart},${process.hrtime.bigint() / 1000n}`);
        console.log('  versions stored per second:', await perSecond('SELECT created_at AS t FROM config_versions WHERE snapshot_id = ?'));
      }
      const seconds = (new Date(last).getTime() - new Date(before).getTime()) / 1000;
      const phases =
        `submitted ${at(p.submitted)} s, dispatched ${at(p.dispatched)} s, agents started ${at(p.first_start)}–${at(p.last_start)} s, ` +
        `last job final ${at(p.last_finish)} s, last version stored ${at(last)} s`;
      return { seconds, acceptedMs, snap, phases };
    };

    const targets = simTargets(rows, simPort);
    const limits = { sessions: agentCount * concurrency, connects: agentCount * connectSlotsOf(concurrency) };

    // Warm-up, not timed: each path does every device's work `--warmup-rounds` times first, so
    // that all processes meet the timed round warm (see the deploy benchmark).
    for (let i = 0; i < warmupRounds; i++) {
      await endToEnd(ids);
      await workFloor('backup', targets, limits);
    }

    const setUp = embedded
      ? `embedded default (PGlite, built-in agent on the ${embedded === 'thread' ? 'worker thread' : "controller's main thread"})`
      : `NATS ${NATS_URL}`;
    console.log(`backup benchmark: ${devices} simulated SSH devices (vendor_ios), ${agentCount} agents × concurrency ${concurrency}, ${setUp}`);
    console.log(ROUND_HEADER);
    const meter = () =>
      cpuMeter(
        embedded
          ? { simulator: processCpu(() => [sim.proc.pid]), 'controller (all threads, PGlite)': selfCpu, floor: processCpu(floorPids) }
          : {
              agents: processCpu(() => agents.map((a) => a.pid)),
              simulator: processCpu(() => [sim.proc.pid]),
              controller: selfCpu,
              postgres: () => cpuOfNamed('postgres'),
              'nats-server': () => cpuOfNamed('nats-server'),
              floor: processCpu(floorPids),
            },
      );
    const cpuNotes: string[] = [];
    const times: RoundTimes[] = [];
    for (let round = 1; round <= rounds; round++) {
      let counting = meter();
      const busy = embeddedAgent && busyMeter(embeddedAgent);
      const e2e = await c.statementTimes.around(`round ${round}, end to end`, () => endToEnd(ids));
      cpuNotes.push(`  CPU s of round ${round}, end to end: ${counting(devices).text}`);
      if (busy) cpuNotes.push(busy(devices));
      counting = meter();
      const floor = await workFloor('backup', targets, limits);
      const floorCpu = counting(devices);
      cpuNotes.push(`  CPU s of round ${round}, floor (floor = the driver's process): ${floorCpu.text}`);
      let pipelineSeconds: number | undefined;
      if (!embedded) {
        // The NATS protocol's floors (PostgreSQL + JetStream); the embedded default has neither.
        const protocol = await protocolFloor(db, NATS_URL, floor.results, limits.sessions);
        cpuNotes.push(protocolFloorReport({ seconds: floor.seconds, cpuSeconds: floorCpu.total }, protocol, devices));
        const pipeline = await pipelineFloor(db, NATS_URL, targets, {
          work: 'backup',
          agents: agentCount,
          sessions: concurrency,
          connects: connectSlotsOf(concurrency),
          simulatorPid: sim.proc.pid,
          warmupRounds,
        });
        cpuNotes.push(pipelineFloorReport(pipeline, floor.seconds, agentCount));
        pipelineSeconds = pipeline.seconds;
      }
      times.push(
        printRound({
          round,
          devices,
          pipeline: pipelineSeconds,
          e2e,
          outcomes: [e2e.snap.successful_devices, e2e.snap.failed_devices],
          floor,
          notes: cpuNotes.splice(0),
        }),
      );
    }
    printClosing(`1,000 devices ≤ 30 s end to end; ratio (end to end / floor) ≤ ${embedded ? RATIO_TARGET.embedded : RATIO_TARGET.nats}`, times);
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await embeddedAgent?.stop();
    await sim.proc.stop();
    await c.close();
    if (!embedded) await dropNatsNamespace(NATS_URL, prefix).catch(() => undefined);
  }
}
