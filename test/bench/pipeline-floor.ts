/**
 * The pipeline floor: the least this architecture can take end to end, measured rather than
 * bounded. The driver floor's sessions run where DESIGN.md puts them, in agent processes of
 * their own (`--agents` of them, the same sessions and set-ups each), and each device travels
 * the protocol every implementation needs: a durable job signed by the controller's key
 * (JetStream publish with its id, pull, signature checked, ack) and a durable result signed by
 * the agent's key, verified and stored as one row. Nothing else: no REST call, job rows, secrets,
 * deadlines, logs or business logic.
 *
 * Its time against the driver floor's is the lowest end-to-end / floor ratio any controller and
 * agents could reach on this machine: the sessions now share the cores with NATS, PostgreSQL
 * and each other's processes, and the protocol's CPU comes on top.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { StringCodec, type JsMsg } from 'nats';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  controllerKeyFromSecret,
  generateAgentKeys,
  importAgentPublicKey,
  signJson,
  signerOf,
  verifyJson,
  type AnyKey,
  type ControllerKey,
} from '../../shared/src/jobs/crypto';
import { mapLimit } from '../../shared/src/jobs/limit';
import { connectNats } from '../../shared/src/nats/jetstream';
import { jobsSubject, poolConsumer } from '../../shared/src/nats/subjects';
import { spawnTs, waitUntil, type Proc } from '../helpers/processes';
import { cpuMeter, cpuOfNamed, processCpu, selfCpu } from './cpu';
import type { FloorWorkName } from './floor-work';
import { FLOOR_ORG, FLOOR_POOL, floorScratch } from './protocol-floor';

export const PIPELINE_CONSUMER = poolConsumer(FLOOR_ORG, FLOOR_POOL);

/** A job of the pipeline floor (signed by the controller key): the device, in the clear (no secrets to seal here). */
export interface PipelineJob {
  id: number;
  target: DeviceTarget;
}

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

const sc = StringCodec();
/** No result for this long: an agent process is stuck or gone. */
const STALL_MS = 120_000;

/** The controller side's view of one result: which device, whether it worked, what to store. */
async function verifiedRow(m: JsMsg, keys: Map<string, AnyKey>): Promise<{ device: number; ok: boolean; result: string }> {
  const token = sc.decode(m.data);
  const key = keys.get(signerOf(token) ?? '');
  if (!key) throw new Error('a result from an unknown agent');
  const event = (await verifyJson(token, key, AGENT_SIGN_ALG)) as { job_id: number; ok: boolean; result: unknown };
  return { device: event.job_id, ok: event.ok, result: JSON.stringify(event.result) };
}

/** Starts the agent processes (each with its own key); answers them with the keys to verify their results. */
async function startPipelineAgents(
  natsUrl: string,
  prefix: string,
  o: PipelineFloorOptions,
  controllerKey: ControllerKey,
  agents: Proc[],
): Promise<Map<string, AnyKey>> {
  const keys = new Map<string, AnyKey>();
  for (let i = 0; i < o.agents; i++) {
    const agentId = `pipeline-agent-${i + 1}`;
    const pair = await generateAgentKeys();
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
  return keys;
}

/** A timed pipeline floor run: seconds, failed devices, CPU seconds in all and by process. */
export interface PipelineFloorRun {
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
  try {
    // Jobs are signed by a controller key and checked by the agents, as DESIGN.md has them.
    const controllerKey = controllerKeyFromSecret(randomBytes(32));
    const keys = await startPipelineAgents(natsUrl, names.prefix, o, controllerKey, agents);
    const js = nc.jetstream();
    const results = await js.consumers.get(names.resultsStream, names.resultsConsumer);
    /** Publishes the jobs of `batch` (ids from `first`) and stores their results; answers the failed count. */
    const round = async (batch: DeviceTarget[], first: number): Promise<number> => {
      const submit = mapLimit(batch, 256, async (target, i) =>
        js.publish(
          jobsSubject(names.prefix, FLOOR_ORG, FLOOR_POOL),
          sc.encode(await signJson({ id: first + i, target } satisfies PipelineJob, controllerKey.privateKey, CONTROLLER_SIGN_ALG)),
          { msgID: `job-${first + i}` },
        ),
      );
      let failed = 0;
      let progressAt = Date.now();
      for (let stored = 0; stored < batch.length;) {
        const msgs: JsMsg[] = [];
        for await (const m of await results.fetch({ max_messages: Math.min(64, batch.length - stored), expires: 2_000 })) msgs.push(m);
        if (msgs.length > 0) progressAt = Date.now();
        else if (Date.now() - progressAt > STALL_MS) {
          throw new Error(
            `the pipeline floor stalled at ${stored} of ${batch.length} results; agent output:\n${agents.map((a) => a.output().slice(-2000)).join('\n')}`,
          );
        }
        const rows = await Promise.all(msgs.map((m) => verifiedRow(m, keys)));
        failed += rows.filter((r) => !r.ok).length;
        if (rows.length > 0) await db(table).insert(rows);
        msgs.forEach((m) => m.ack());
        stored += msgs.length;
      }
      await submit;
      return failed;
    };

    for (let i = 1; i <= o.warmupRounds; i++) await round(targets, i * 1_000_000);
    const counting = cpuMeter({
      agents: processCpu(() => agents.map((a) => a.pid)),
      simulator: processCpu(() => [o.simulatorPid]),
      'this process': selfCpu,
      postgres: () => cpuOfNamed('postgres'),
      'nats-server': () => cpuOfNamed('nats-server'),
    });
    const started = performance.now();
    const failed = await round(targets, 0);
    const seconds = (performance.now() - started) / 1000;
    const cpu = counting(targets.length);
    return { seconds, failed, cpuText: cpu.text, cpuSeconds: cpu.total };
  } finally {
    await Promise.all(agents.map((a) => a.stop(2_000)));
    await scratch.drop();
    await nc.close();
  }
}

/** The line a benchmark prints for it. */
export function pipelineFloorReport(pipeline: PipelineFloorRun, floorSeconds: number, agents: number): string {
  return (
    `  pipeline floor (the driver in ${agents} agent process(es), signed JetStream job and agent-signed result, one row per device; no ` +
    `controller or agent logic): ` +
    `${pipeline.seconds.toFixed(2)} s, ${pipeline.failed} failed, ratio to the floor ${(pipeline.seconds / floorSeconds).toFixed(2)}; CPU s: ` +
    `${pipeline.cpuText}`
  );
}
