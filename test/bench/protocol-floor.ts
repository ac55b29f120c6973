/**
 * The protocol floor: the least any end-to-end run adds to the driver floor, whatever the
 * controller and agents do beyond it. DESIGN.md's batched protocol needs, per batch of up to 50
 * jobs, a durable message sealed and signed once by the controller (JetStream publish with its
 * id, pull, signature checked, secrets opened, ack), and per event of up to 100 results a durable
 * message signed once by the agent and verified, and each result stored in PostgreSQL. This runs
 * exactly that, with the real stream settings, batching, sealing and signing code
 * (floor-batches.ts), in this one process: no REST call, no job row, no business logic, one text
 * row per device, so it is a lower bound.
 *
 * On a machine whose cores the driver floor already keeps busy (the simulated devices run on
 * the same cores), the end-to-end run cannot take less than (floor CPU + protocol CPU) / cores,
 * which bounds the ratio from below: `lowestRatio`.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Knex } from 'knex';
import type { JetStreamManager, JsMsg, NatsConnection } from 'nats';
import { DEFAULT_TUNABLES } from '../../controller/src/jobs/engine';
import {
  controllerKeyFromSecret,
  generateAgentKeys,
  importAgentPrivateKey,
  importAgentPublicKey,
  type ControllerKey,
} from '../../shared/src/jobs/crypto';
import type { JobKind } from '../../shared/src/jobs/kinds';
import { mapLimit } from '../../shared/src/jobs/limit';
import { connectNats, deleteStreams, ensurePoolConsumer, ensureResultsConsumer, ensureStreams } from '../../shared/src/nats/jetstream';
import { jobsSubject, natsNames, resultsSubject, type NatsNames } from '../../shared/src/nats/subjects';
import { cpuMeter, cpuOfNamed, selfCpu } from './cpu';
import {
  FLOOR_CONSUMER,
  FLOOR_ORG,
  FLOOR_POOL,
  floorResult,
  floorResultsSender,
  openBatch,
  signedBatches,
  verifiedRows,
  type FloorAgent,
  type FloorJob,
} from './floor-batches';
import { simTargets } from './fleet';

const FETCH = 64;
/** Batches published at once, as dispatch publishes them. */
const PUBLISH_CONCURRENCY = 16;

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

/** Publishes the jobs in signed batches as dispatch does (a pass of DEFAULT_TUNABLES.dispatchBatch jobs at a time). */
export async function publishBatches(
  nc: NatsConnection,
  names: NatsNames,
  jobs: FloorJob[],
  kind: JobKind,
  agents: FloorAgent[],
  controllerKey: ControllerKey,
): Promise<void> {
  const js = nc.jetstream();
  const batches = await signedBatches(jobs, kind, agents, controllerKey, DEFAULT_TUNABLES.dispatchBatch);
  await mapLimit(batches, PUBLISH_CONCURRENCY, ({ id, token }) =>
    js.publish(jobsSubject(names.prefix, FLOOR_ORG, FLOOR_POOL), new TextEncoder().encode(token), { msgID: id }),
  );
}

export interface ProtocolFloor {
  /** CPU milliseconds per device: this process, PostgreSQL and nats-server. */
  cpuMsPerDevice: number;
  text: string;
}

/**
 * Takes messages from a durable consumer as they come and hands each to `handle` (several at once),
 * which answers how many jobs it completed, until `count` are. Rejects when one fails, or when
 * nothing completes for `stallMs` (with `stalled()` saying why).
 */
export async function drain(
  nc: NatsConnection,
  stream: string,
  consumer: string,
  count: number,
  handle: (m: JsMsg) => Promise<number>,
  stall: { ms: number; why(): string } = { ms: 120_000, why: () => '' },
): Promise<void> {
  const messages = await (await nc.jetstream().consumers.get(stream, consumer)).consume({ max_messages: FETCH });
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let done = 0;
      const watch = () => {
        clearTimeout(timer);
        timer = setTimeout(() => reject(new Error(`stalled at ${done} of ${count}${stall.why()}`)), stall.ms);
      };
      watch();
      void (async () => {
        for await (const m of messages) {
          handle(m).then((n) => {
            done += n;
            watch();
            if (done >= count) resolve();
          }, reject);
        }
      })().catch(reject);
    });
  } finally {
    clearTimeout(timer);
    messages.stop();
  }
}

/** The kind the floor's jobs name (only a label here: nothing runs them). */
const KIND: JobKind = 'backup';

/**
 * Runs the protocol for every result (what an agent would send for one device), `concurrency`
 * jobs in flight on the agent side, and measures its CPU.
 */
export async function protocolFloor(db: Knex, natsUrl: string, results: unknown[], concurrency: number): Promise<ProtocolFloor> {
  const controller = await connectNats(natsUrl, 'protocol-floor-controller');
  const agent = await connectNats(natsUrl, 'protocol-floor-agent');
  const pair = await generateAgentKeys();
  const agentId = 'protocol-floor-agent';
  const controllerKey = controllerKeyFromSecret(randomBytes(32));
  const { sign, decrypt } = await importAgentPrivateKey(pair.privateJwk);
  const keys = new Map([[agentId, await importAgentPublicKey(pair.publicJwk)]]);
  const scratch = await floorScratch(db, await controller.jetstreamManager(), 'protocol');
  const { names, table } = scratch;
  try {
    const count = results.length;
    // Devices as the simulator's would be, so the batches weigh what the benchmark's weigh.
    const devices = Array.from({ length: count }, (_, i) => ({
      id: `device-${i}`,
      name: `floor-${i}`,
      host: '127.0.0.1',
      device_type: 'vendor_ios',
    }));
    const jobs = simTargets(devices, 22).map((target, id) => ({ id, target }));

    const counting = cpuMeter({ 'this process': selfCpu, postgres: () => cpuOfNamed('postgres'), 'nats-server': () => cpuOfNamed('nats-server') });
    const agentJs = agent.jetstream();
    const sender = floorResultsSender(agentId, sign, (token, id) =>
      agentJs.publish(resultsSubject(names.prefix, agentId), new TextEncoder().encode(token), { msgID: id }),
    );
    const submit = publishBatches(controller, names, jobs, KIND, [{ id: agentId, publicJwk: pair.publicJwk }], controllerKey);
    const work = drain(agent, names.jobsStream, FLOOR_CONSUMER, count, async (m) => {
      const opened = await openBatch(new TextDecoder().decode(m.data), controllerKey.publicKey, agentId, decrypt);
      await mapLimit(opened, concurrency, ({ job }) => sender.add(floorResult(job, true, results[Number(job.job_id)], new Date())));
      m.ack();
      return opened.length;
    });
    const record = drain(controller, names.resultsStream, names.resultsConsumer, count, async (m) => {
      const rows = await verifiedRows(m, keys);
      await db(table).insert(rows);
      m.ack();
      return rows.length;
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
    `  protocol floor (batches of up to 50 jobs sealed and signed once, results events of up to 100 signed once, each verified, one row per ` +
      `device; no controller or agent logic): ` +
      `${protocol.cpuMsPerDevice.toFixed(2)} ms CPU per device (${protocol.text})`,
    `  lowest ratio this ${availableParallelism()}-core machine allows (floor CPU + protocol CPU on every core, against the floor's time): ` +
      `${lowestRatio(floor, protocol, devices).toFixed(2)}`,
  ].join('\n');
}
