/**
 * The pipeline floor: the least this architecture can take end to end, measured rather than
 * bounded. The driver floor's sessions run where DESIGN.md puts them, in agent processes of
 * their own (`--agents` of them, the same sessions and set-ups each), and the devices travel the
 * batched protocol every implementation needs (floor-batches.ts, the real code of both sides):
 * dispatch's batches of up to 50 jobs, sealed and signed once by the controller's key (JetStream
 * publish with its id, pull, signature checked, secrets opened, ack once every result is out), and
 * the agents' results events of up to 100 results (the agent's own sender: 150 ms or 100 results),
 * signed once by the agent's key, verified and stored one row per device; a deploy job's backup
 * is stored before the change through the agent's backup_store client, answered here (the design
 * requires it). An agent pulls a batch
 * only while a session is free and none of its jobs waits for one, as the agent runtime does.
 * Nothing else: no REST call, job rows, deadlines, logs or business logic.
 *
 * Its time against the driver floor's is the lowest end-to-end / floor ratio any controller and
 * agents could reach on this machine: the sessions now share the cores with NATS, PostgreSQL
 * and each other's processes, and the protocol's CPU comes on top.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { controllerKeyFromSecret, generateAgentKeys, importAgentPublicKey, type AnyKey, type ControllerKey } from '../../shared/src/jobs/crypto';
import { connectNats } from '../../shared/src/nats/jetstream';
import { spawnTs, waitUntil, type Proc } from '../helpers/processes';
import { cpuMeter, cpuOfNamed, processCpu, selfCpu } from './cpu';
import { answerFloorBackups, verifiedRows, type FloorAgent } from './floor-batches';
import type { FloorWorkName } from './floor-work';
import { drain, floorScratch, publishBatches } from './protocol-floor';

export interface PipelineFloorOptions {
  work: FloorWorkName;
  agents: number;
  /** Sessions and connection set-ups at once, per agent process. */
  sessions: number;
  connects: number;
  /** The simulator's process, for the CPU figures. */
  simulatorPid: number;
  /** Untimed warm-up rounds over all the targets before the timed one. */
  warmupRounds: number;
}

/** No result for this long: an agent process is stuck or gone. */
const STALL_MS = 120_000;

/** Starts the agent processes (each with its own key); answers them as dispatch seals to them, and the keys to verify their results. */
async function startPipelineAgents(
  natsUrl: string,
  prefix: string,
  o: PipelineFloorOptions,
  controllerKey: ControllerKey,
  agents: Proc[],
): Promise<{ pool: FloorAgent[]; keys: Map<string, AnyKey> }> {
  const pool: FloorAgent[] = [];
  const keys = new Map<string, AnyKey>();
  for (let i = 0; i < o.agents; i++) {
    const agentId = `pipeline-agent-${i + 1}`;
    const pair = await generateAgentKeys();
    pool.push({ id: agentId, publicJwk: pair.publicJwk });
    keys.set(agentId, await importAgentPublicKey(pair.publicJwk));
    agents.push(
      spawnTs('test/bench/pipeline-agent.ts', {
        NATS_URL: natsUrl,
        FLOOR_PREFIX: prefix,
        FLOOR_WORK: o.work,
        FLOOR_SESSIONS: String(o.sessions),
        FLOOR_CONNECTS: String(o.connects),
        FLOOR_AGENT_ID: agentId,
        FLOOR_AGENT_JWK: JSON.stringify(pair.privateJwk),
        FLOOR_CONTROLLER_JWK: JSON.stringify(controllerKey.publicJwk),
      }),
    );
  }
  for (const a of agents) await waitUntil('a pipeline agent', () => a.output().includes('pipeline agent ready'), a, 60_000);
  return { pool, keys };
}

/** A timed pipeline floor run: seconds, failed devices, CPU seconds in all and by process. */
export interface PipelineFloorRun {
  work: FloorWorkName;
  seconds: number;
  failed: number;
  cpuText: string;
  cpuSeconds: number;
}

/**
 * Runs the pipeline untimed to warm up (`o.warmupRounds`; JIT, NATS consumers), then over all
 * the targets timed. Answers the timed run's seconds, failed devices and CPU figures.
 */
export async function pipelineFloor(db: Knex, natsUrl: string, targets: DeviceTarget[], o: PipelineFloorOptions): Promise<PipelineFloorRun> {
  const nc = await connectNats(natsUrl, 'pipeline-floor-controller');
  const scratch = await floorScratch(db, await nc.jetstreamManager(), 'pipeline');
  const { names, table } = scratch;
  const agents: Proc[] = [];
  let backups: { unsubscribe(): void } | null = null;
  try {
    // Batches are sealed to the agents and signed by a controller key, as dispatch does.
    const controllerKey = controllerKeyFromSecret(randomBytes(32));
    const { pool, keys } = await startPipelineAgents(natsUrl, names.prefix, o, controllerKey, agents);
    // Deploy's agents have each backup stored before the change: answered here, a row per backup.
    if (o.work === 'deploy') backups = answerFloorBackups(nc, names.heartbeatSubject, keys, controllerKey, (rows) => db(table).insert(rows));
    const stall = { ms: STALL_MS, why: () => `; agent output:\n${agents.map((a) => a.output().slice(-2000)).join('\n')}` };
    /** Dispatches the jobs of `round` (ids from `first`) and stores their results; answers the failed count. */
    const round = async (first: number): Promise<number> => {
      let failed = 0;
      const jobs = targets.map((target, i) => ({ id: first + i, target }));
      const submit = publishBatches(nc, names, jobs, o.work, pool, controllerKey);
      const record = drain(
        nc,
        names.resultsStream,
        names.resultsConsumer,
        jobs.length,
        async (m) => {
          const rows = await verifiedRows(m, keys);
          failed += rows.filter((r) => !r.ok).length;
          await db(table).insert(rows);
          m.ack();
          return rows.length;
        },
        stall,
      );
      await Promise.all([submit, record]);
      return failed;
    };

    for (let i = 1; i <= o.warmupRounds; i++) await round(i * 1_000_000);
    const counting = cpuMeter({
      agents: processCpu(() => agents.map((a) => a.pid)),
      simulator: processCpu(() => [o.simulatorPid]),
      'this process': selfCpu,
      postgres: () => cpuOfNamed('postgres'),
      'nats-server': () => cpuOfNamed('nats-server'),
    });
    const started = performance.now();
    const failed = await round(0);
    const seconds = (performance.now() - started) / 1000;
    const cpu = counting(targets.length);
    return { work: o.work, seconds, failed, cpuText: cpu.text, cpuSeconds: cpu.total };
  } finally {
    backups?.unsubscribe();
    await Promise.all(agents.map((a) => a.stop(2_000)));
    await scratch.drop();
    await nc.close();
  }
}

/** The line a benchmark prints for it (with its ratio to the driver floor when there is one). */
export function pipelineFloorReport(pipeline: PipelineFloorRun, floorSeconds: number | null, agents: number): string {
  const ratio = floorSeconds ? `, ratio to the floor ${(pipeline.seconds / floorSeconds).toFixed(2)}` : '';
  return (
    `  pipeline floor (the driver in ${agents} agent process(es), jobs in sealed and signed batches, results in agent-signed events, ` +
    `one row per device${pipeline.work === 'deploy' ? ', each backup stored by a backup_store request before the change' : ''}; ` +
    `no controller or agent logic): ` +
    `${pipeline.seconds.toFixed(2)} s, ${pipeline.failed} failed${ratio}; CPU s: ${pipeline.cpuText}`
  );
}
