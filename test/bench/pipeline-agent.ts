/**
 * The agent side of the pipeline floor (test/bench/pipeline-floor.ts), a process of its own as
 * an agent is: pulls job batches from the pool's JetStream consumer one at a time, and only while
 * a session is free and none of its jobs waits for one (the agent runtime's rule: it holds at most
 * its sessions plus one batch); checks the controller's signature and opens the secrets once per
 * batch, does the floor's work on each device (floor-work.ts; a deploy job has its backup stored by
 * the benchmark process first, as the agent's backup_store does), hands each result to the agent's
 * results sender (events of up to 100 results, signed once) and acks a batch once all its results
 * are published. No deadlines, logs, `started` events or retries.
 *
 * Environment: NATS_URL, FLOOR_PREFIX, FLOOR_WORK (backup|poll|deploy), FLOOR_SESSIONS, FLOOR_CONNECTS,
 * FLOOR_AGENT_ID, FLOOR_AGENT_JWK (the private key, JWK JSON), FLOOR_CONTROLLER_JWK (the controller's
 * public key, JWK JSON).
 */
import type { JsMsg } from 'nats';
import type { BatchJob } from '../../shared/src/jobs/messages';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { importAgentPrivateKey, importControllerPublicKey } from '../../shared/src/jobs/crypto';
import { Semaphore } from '../../shared/src/jobs/limit';
import { connectNats } from '../../shared/src/nats/jetstream';
import { natsNames, resultsSubject } from '../../shared/src/nats/subjects';
import { FLOOR_CONSUMER, floorBackupStore, floorResult, floorResultsSender, openBatch } from './floor-batches';
import { FLOOR_WORK, type FloorHooks, type FloorOutcome, type FloorWorkName } from './floor-work';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const names = natsNames(env('FLOOR_PREFIX'));
const work = FLOOR_WORK[env('FLOOR_WORK') as FloorWorkName];
const sessions = new Semaphore(Number(env('FLOOR_SESSIONS')));
const connectSlots = new Semaphore(Number(env('FLOOR_CONNECTS')));
const agentId = env('FLOOR_AGENT_ID');
const { sign, decrypt } = await importAgentPrivateKey(JSON.parse(env('FLOOR_AGENT_JWK')));
const controllerKey = importControllerPublicKey(JSON.parse(env('FLOOR_CONTROLLER_JWK')));

// Exit on SIGTERM (stop()) rather than die of it, so that SB_CPU_PROF_DIR's profile gets written.
process.once('SIGTERM', () => process.exit(0));

const nc = await connectNats(env('NATS_URL'), `pipeline-floor ${agentId}`);
const js = nc.jetstream();
const consumer = await js.consumers.get(names.jobsStream, FLOOR_CONSUMER);
const encoder = new TextEncoder();
const sender = floorResultsSender(agentId, sign, (token, id) =>
  js.publish(resultsSubject(names.prefix, agentId), encoder.encode(token), { msgID: id }),
);
// A deploy job's backup goes to the controller (the benchmark process) before the change.
const backups = floorBackupStore(nc, names.heartbeatSubject, agentId, { sign, controller: controllerKey });
const hooksOf = (job: BatchJob): FloorHooks => ({ beforeChange: (backup) => backups.store(job, backup, Date.now() + 60_000) });

async function outcomeOf(job: BatchJob, target: DeviceTarget): Promise<FloorOutcome> {
  try {
    const session = await connectSlots.use(() => work.open(target));
    try {
      return await work.run(session, target, hooksOf(job));
    } finally {
      await session.close();
    }
  } catch (err) {
    return { ok: false, result: { error: (err as Error).message } };
  }
}

/** Jobs taken and waiting for a session, and batches taken and not yet opened: no batch is pulled while any wait. */
let queued = 0;
let opening = 0;
let wake: (() => void) | null = null;
const wakePull = () => wake?.();

async function handle(m: JsMsg): Promise<void> {
  opening += 1;
  let jobs: Awaited<ReturnType<typeof openBatch>>;
  try {
    jobs = await openBatch(new TextDecoder().decode(m.data), controllerKey, agentId, decrypt);
    queued += jobs.length;
  } finally {
    opening -= 1;
    wakePull();
  }
  await Promise.all(
    jobs.map(async ({ job, target }) => {
      await sessions.acquire();
      queued -= 1;
      const startedAt = new Date();
      let outcome: FloorOutcome;
      try {
        outcome = await outcomeOf(job, target);
      } finally {
        sessions.release();
        wakePull();
      }
      const stored = sender.add(floorResult(job, outcome.ok, outcome.result, startedAt));
      if (sessions.inUse === 0 && queued === 0) sender.flush(); // as the agent runtime does when its last job ends
      await stored;
    }),
  );
  m.ack();
}

console.log('pipeline agent ready');
for (;;) {
  if (sessions.free === 0 || queued > 0 || opening > 0) {
    await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    continue;
  }
  try {
    for await (const m of await consumer.fetch({ max_messages: 1, expires: 1_000 }))
      void handle(m).catch((err: unknown) => console.error(`a batch failed: ${(err as Error).message}`));
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
