/**
 * The agent side of the pipeline floor (test/bench/pipeline-floor.ts), a process of its own as
 * an agent is: pulls jobs from the pool's JetStream consumer as free sessions allow, checks the
 * controller's signature, does the floor's work on the device (floor-work.ts), signs the answer
 * with its key as agents sign results, publishes it with its id and acks the job. No secrets,
 * deadlines, logs or retries.
 *
 * Environment: NATS_URL, FLOOR_PREFIX, FLOOR_WORK (backup|poll|deploy), FLOOR_SESSIONS, FLOOR_CONNECTS,
 * FLOOR_AGENT_ID, FLOOR_AGENT_JWK (the private key, JWK JSON), FLOOR_CONTROLLER_JWK (the controller's
 * public key, JWK JSON).
 */
import { StringCodec, type JsMsg } from 'nats';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  importAgentPrivateKey,
  importControllerPublicKey,
  signJsonDetached,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import { Semaphore } from '../../shared/src/jobs/limit';
import { connectNats } from '../../shared/src/nats/jetstream';
import { natsNames, resultsSubject } from '../../shared/src/nats/subjects';
import { FLOOR_WORK, type FloorOutcome, type FloorWorkName } from './floor-work';
import { PIPELINE_CONSUMER, type PipelineJob } from './pipeline-floor';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const sc = StringCodec();
const names = natsNames(env('FLOOR_PREFIX'));
const work = FLOOR_WORK[env('FLOOR_WORK') as FloorWorkName];
const sessions = Number(env('FLOOR_SESSIONS'));
const connectSlots = new Semaphore(Number(env('FLOOR_CONNECTS')));
const agentId = env('FLOOR_AGENT_ID');
const { sign } = await importAgentPrivateKey(JSON.parse(env('FLOOR_AGENT_JWK')));
const controllerKey = importControllerPublicKey(JSON.parse(env('FLOOR_CONTROLLER_JWK')));

const nc = await connectNats(env('NATS_URL'), `pipeline-floor ${agentId}`);
const js = nc.jetstream();
const consumer = await js.consumers.get(names.jobsStream, PIPELINE_CONSUMER);

async function outcomeOf(target: DeviceTarget): Promise<FloorOutcome> {
  try {
    const session = await connectSlots.use(() => work.open(target));
    try {
      return await work.run(session, target);
    } finally {
      await session.close();
    }
  } catch (err) {
    return { ok: false, result: { error: (err as Error).message } };
  }
}

let active = 0;
let slotFreed: (() => void) | null = null;

async function handle(m: JsMsg): Promise<void> {
  active += 1;
  try {
    const job = (await verifyJson(sc.decode(m.data), controllerKey, CONTROLLER_SIGN_ALG)) as PipelineJob;
    const outcome = await outcomeOf(job.target);
    const token = await signJsonDetached({ type: 'result', job_id: job.id, ok: outcome.ok, result: outcome.result }, sign, AGENT_SIGN_ALG, agentId);
    await js.publish(resultsSubject(names.prefix, agentId), sc.encode(token), { msgID: `result-${job.id}` });
    m.ack();
  } finally {
    active -= 1;
    slotFreed?.();
  }
}

console.log('pipeline agent ready');
for (;;) {
  const free = sessions - active;
  if (free <= 0) {
    await new Promise<void>((resolve) => (slotFreed = resolve));
    slotFreed = null;
    continue;
  }
  try {
    for await (const m of await consumer.fetch({ max_messages: free, expires: 1_000 })) void handle(m);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
