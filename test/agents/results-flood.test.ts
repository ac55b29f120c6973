/**
 * A flood of large events on a results subject (what any enrolled agent, or any client of a NATS
 * without per-agent accounts, may publish) while recording is held up. The controller took every
 * event NATS handed it and held it until recorded, bounded only by their count (the results
 * consumer's max_ack_pending, 1,024): about 1 GB of buffers at NATS's 1 MB max_payload, outside the
 * 256 MB heap, and before any signature was checked. It now holds at most RESULTS_HELD_BYTES and
 * leaves the rest on the stream until recording frees room. Real controller, real PostgreSQL, real
 * NATS JetStream; the agent is enrolled and never started, the test speaks for it.
 */
import { randomUUID } from 'node:crypto';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsAgentLink } from '../../agent/src/nats-link';
import type { AgentIdentity } from '../../agent/src/identity';
import { RESULTS_HELD_BYTES, type NatsJobTransport } from '../../controller/src/jobs/nats-transport';
import { importAgentPrivateKey, type AnyKey } from '../../shared/src/jobs/crypto';
import type { AgentLink } from '../../shared/src/jobs/link';
import { natsNames } from '../../shared/src/nats/subjects';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, jobRow, makeDevice, makeProfile, natsPrefix, resultsToken, until, type Org } from './helpers';

const prefix = natsPrefix();
const names = natsNames(prefix);
/** Each flood event: under NATS's default max_payload (1 MiB) with its headers, four times what an agent's results event carries. */
const EVENT_BYTES = 1_000_000;
/** 160 MB in all: more than twice RESULTS_HELD_BYTES, far under the consumer's count bound. */
const FLOOD = 160;

let tc: TestController;
let org: Org;
let identity: AgentIdentity;
let sign: AnyKey;
let link: AgentLink;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  tc = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200, resultsAckWaitMs: 1_000 } } });
  org = await tc.createOrgUser(['org_admin']);
  ({ identity } = await enrollAgent(tc, org, { name: 'flooding' }));
  sign = (await importAgentPrivateKey(identity.private_jwk)).sign;
  link = await natsAgentLink(SHARED_NATS, identity);
  nc = await connect({ servers: SHARED_NATS });
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  await link?.close().catch(() => undefined);
  await nc?.close().catch(() => undefined);
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

/**
 * An event of `bytes` bytes naming the agent (so verifying it reads the agents table) whose
 * signature does not match: a real signed header and signature over a small event, then a payload
 * padded to size.
 */
async function garbage(bytes: number): Promise<string> {
  const signed = await resultsToken(sign, identity.agent_id, [{ job_id: randomUUID() }]);
  const head = signed.slice(0, signed.indexOf('\n') + 1);
  const body = JSON.stringify({ v: 1, type: 'results', agent_id: identity.agent_id, results: [], pad: '' });
  return head + body.replace('"pad":""', `"pad":"${'x'.repeat(bytes - head.length - body.length)}"`);
}

const consumerInfo = () => jsm.consumers.info(names.resultsStream, names.resultsConsumer);

describe('a flood of large events on the results subject', () => {
  it('holds at most RESULTS_HELD_BYTES of them while recording is held up, leaves the rest on the stream, and records a normal result afterwards', async () => {
    const transport = tc.services.jobEngine.transport as NatsJobTransport;
    const event = await garbage(EVENT_BYTES);
    expect(Buffer.byteLength(event)).toBe(EVENT_BYTES);
    expect(EVENT_BYTES * FLOOD).toBeGreaterThan(2 * RESULTS_HELD_BYTES);

    // Recording reads the signer's row first: with the agents table locked it waits, as behind a
    // slow or stuck database, and holds what it took.
    const hold = await tc.db.transaction();
    let delivered = 0; // the most events NATS counted as handed to the controller and not yet acked
    try {
      await hold.raw('LOCK TABLE agents IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i < FLOOD; i += 10) await Promise.all(Array.from({ length: Math.min(10, FLOOD - i) }, () => link.publish(event, randomUUID())));
      // Until the controller has taken all it will: everything (as it did), or until it stopped.
      await until(
        'the controller to take every event or to stop taking them',
        async () => {
          const info = await consumerInfo();
          delivered = Math.max(delivered, info.num_ack_pending);
          return info.num_pending === 0 || transport.resultsPauses > 0;
        },
        60_000,
        50,
      );
      // What is still on its way to it (at most one pull window) arrives meanwhile; and the lock is
      // held past the controller's pause bound (the results ack wait, 1 s here), after which it
      // drops its consumer and takes it again only once recording frees room.
      for (let i = 0; i < 60; i++) {
        delivered = Math.max(delivered, (await consumerInfo()).num_ack_pending);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Seen from NATS: no more was ever handed to the controller than the bound, and the rest waits on the stream.
      expect(delivered * EVENT_BYTES).toBeLessThanOrEqual(RESULTS_HELD_BYTES);
      expect((await consumerInfo()).num_pending).toBeGreaterThan(0);
      // Seen from the controller: the bytes it held never went past the bound, and it did stop taking events.
      expect(transport.resultsBytesHeldPeak).toBeGreaterThan(RESULTS_HELD_BYTES / 2);
      expect(transport.resultsBytesHeldPeak).toBeLessThanOrEqual(RESULTS_HELD_BYTES);
      expect(transport.resultsPauses).toBeGreaterThan(0);
    } finally {
      await hold.commit();
    }

    // Recording resumes: every event of the flood is taken in the end (refused: its signature does not match), none stays held.
    await until(
      'the whole flood taken and acknowledged',
      async () => {
        const info = await consumerInfo();
        // A copy redelivered after the ack wait may still wait to be recorded once NATS has the first copy's ack.
        return info.num_pending === 0 && info.num_ack_pending === 0 && transport.resultsBytesHeld === 0;
      },
      120_000,
      200,
    );
    expect(transport.resultsBytesHeld).toBe(0);

    // A normal result is recorded afterwards: nothing is stuck.
    const profileId = await makeProfile(tc, org, { ssh_port: 22, password: 'unused-secret' });
    const deviceId = await makeDevice(tc, org, { profile_id: profileId });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 120_000 }]);
    await until('the job to be dispatched', async () => (await jobRow(tc, jobId)).status === 'dispatched');
    await link.publish(await resultsToken(sign, identity.agent_id, [{ job_id: jobId }]), randomUUID());
    const [outcome] = await tc.services.jobs.wait([jobId], 30_000);
    expect(outcome.status).toBe('succeeded');
  }, 240_000);
});
