/**
 * The protocol floor: the least any end-to-end run adds to the driver floor, whatever the
 * controller and agents do beyond it. Per device, DESIGN.md's protocol needs a durable job
 * signed by the controller's key (JetStream publish with its id, pull, signature checked, ack),
 * a durable result (the same, back) signed by the agent's key and verified, and the result
 * stored in PostgreSQL. This runs exactly that, with
 * the real stream settings and signing code, in this one process: no REST call, no job row, no
 * secrets, no business logic, one text row per device, so it is a lower bound.
 *
 * On a machine whose cores the driver floor already keeps busy (the simulated devices run on
 * the same cores), the end-to-end run cannot take less than (floor CPU + protocol CPU) / cores,
 * which bounds the ratio from below: `lowestRatio`.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Knex } from 'knex';
import type { JetStreamManager, JsMsg, NatsConnection } from 'nats';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  controllerKeyFromSecret,
  generateAgentKeys,
  importAgentPrivateKey,
  importAgentPublicKey,
  signJson,
  signJsonDetached,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import { mapLimit } from '../../shared/src/jobs/limit';
import { connectNats, deleteStreams, ensurePoolConsumer, ensureResultsConsumer, ensureStreams } from '../../shared/src/nats/jetstream';
import { jobsSubject, natsNames, poolConsumer, resultsSubject, type NatsNames } from '../../shared/src/nats/subjects';
import { cpuMeter, cpuOfNamed, selfCpu } from './cpu';

export const FLOOR_ORG = 'bench';
export const FLOOR_POOL = 'default';
const FETCH = 64;

/**
 * The scratch space of one floor run: the job protocol's streams and consumers under a prefix of
 * their own, and a table for the results (one row per device). `drop` removes both.
 */
export async function floorScratch(
  db: Knex,
  jsm: JetStreamManager,
  stem: string,
): Promise<{ names: NatsNames; table: string; drop(): Promise<void> }> {
  const names = natsNames(`${stem}${randomBytes(4).toString('hex')}`);
  const table = `${stem}_floor_${randomBytes(4).toString('hex')}`;
  const drop = async () => {
    await deleteStreams(jsm, names).catch(() => undefined);
    await db.schema.dropTableIfExists(table).catch(() => undefined);
  };
  try {
    await ensureStreams(jsm, names);
    await ensurePoolConsumer(jsm, names, FLOOR_ORG, FLOOR_POOL, 30_000);
    await ensureResultsConsumer(jsm, names, 30_000, 1024);
    await db.schema.createTable(table, (t) => {
      t.increments('id');
      t.integer('device').notNullable();
      t.boolean('ok').notNullable().defaultTo(true);
      t.text('result').notNullable();
    });
  } catch (err) {
    await drop();
    throw err;
  }
  return { names, table, drop };
}

export interface ProtocolFloor {
  /** CPU milliseconds per device: this process, PostgreSQL and nats-server. */
  cpuMsPerDevice: number;
  text: string;
}

/** Pulls `count` messages from a durable consumer in batches, handing each batch to `handle`. */
async function drain(nc: NatsConnection, stream: string, consumer: string, count: number, handle: (msgs: JsMsg[]) => Promise<void>): Promise<void> {
  const source = await nc.jetstream().consumers.get(stream, consumer);
  for (let seen = 0; seen < count;) {
    const msgs: JsMsg[] = [];
    for await (const m of await source.fetch({ max_messages: Math.min(FETCH, count - seen), expires: 2_000 })) msgs.push(m);
    seen += msgs.length;
    await handle(msgs);
  }
}

/**
 * Runs the protocol for every result (what an agent would send for one device), `concurrency`
 * results in flight on the agent side, and measures its CPU.
 */
export async function protocolFloor(db: Knex, natsUrl: string, results: unknown[], concurrency: number): Promise<ProtocolFloor> {
  const controller = await connectNats(natsUrl, 'protocol-floor-controller');
  const agent = await connectNats(natsUrl, 'protocol-floor-agent');
  const keys = await generateAgentKeys();
  const controllerKey = controllerKeyFromSecret(randomBytes(32));
  const { sign } = await importAgentPrivateKey(keys.privateJwk);
  const key = await importAgentPublicKey(keys.publicJwk);
  const scratch = await floorScratch(db, await controller.jetstreamManager(), 'protocol');
  const { names, table } = scratch;
  try {
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const count = results.length;

    const counting = cpuMeter({ 'this process': selfCpu, postgres: () => cpuOfNamed('postgres'), 'nats-server': () => cpuOfNamed('nats-server') });
    const controllerJs = controller.jetstream();
    const agentJs = agent.jetstream();
    // Jobs signed by the controller's key and checked by the agent, as DESIGN.md has them.
    const submit = mapLimit(results, 256, async (_, i) =>
      controllerJs.publish(
        jobsSubject(names.prefix, FLOOR_ORG, FLOOR_POOL),
        encoder.encode(await signJson({ job_id: i, kind: 'bench', attempt: 1 }, controllerKey.privateKey, CONTROLLER_SIGN_ALG)),
        { msgID: `job-${i}` },
      ),
    );
    const work = drain(agent, names.jobsStream, poolConsumer(FLOOR_ORG, FLOOR_POOL), count, (jobs) =>
      mapLimit(jobs, concurrency, async (m) => {
        const job = (await verifyJson(decoder.decode(m.data), controllerKey.publicKey, CONTROLLER_SIGN_ALG)) as { job_id: number };
        const token = await signJsonDetached({ type: 'result', job_id: job.job_id, result: results[job.job_id] }, sign, AGENT_SIGN_ALG, 'agent');
        await agentJs.publish(resultsSubject(names.prefix, 'agent'), encoder.encode(token), { msgID: `result-${job.job_id}` });
        m.ack();
      }).then(() => undefined),
    );
    const record = drain(controller, names.resultsStream, names.resultsConsumer, count, async (msgs) => {
      const rows = await Promise.all(
        msgs.map(async (m) => {
          const event = (await verifyJson(decoder.decode(m.data), key, AGENT_SIGN_ALG)) as { job_id: number; result: unknown };
          return { device: event.job_id, result: JSON.stringify(event.result) };
        }),
      );
      if (rows.length > 0) await db(table).insert(rows);
      msgs.forEach((m) => m.ack());
    });
    await Promise.all([submit, work, record]);
    const cpu = counting(count);
    return { cpuMsPerDevice: (cpu.total * 1000) / count, text: cpu.text };
  } finally {
    await scratch.drop();
    await Promise.all([controller.close(), agent.close()]);
  }
}

/**
 * The lowest end-to-end / floor ratio this machine allows: every core busy with the driver
 * floor's work plus the protocol's, against the floor's measured time.
 */
export function lowestRatio(floor: { seconds: number; cpuSeconds: number }, protocol: ProtocolFloor, devices: number): number {
  const cpuSeconds = floor.cpuSeconds + (protocol.cpuMsPerDevice * devices) / 1000;
  return cpuSeconds / availableParallelism() / floor.seconds;
}

/** The lines a benchmark prints after its ratio. */
export function protocolFloorReport(floor: { seconds: number; cpuSeconds: number }, protocol: ProtocolFloor, devices: number): string {
  return [
    `  protocol floor (signed JetStream job and agent-signed result, each verified, one row per device; no controller or agent logic): ` +
      `${protocol.cpuMsPerDevice.toFixed(2)} ms CPU per device (${protocol.text})`,
    `  lowest ratio this ${availableParallelism()}-core machine allows (floor CPU + protocol CPU on every core, against the floor's time): ` +
      `${lowestRatio(floor, protocol, devices).toFixed(2)}`,
  ].join('\n');
}
