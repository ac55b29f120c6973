/**
 * The controller answers agents' requests only under an agent's inbox: NATS does not check a
 * reply subject against the requester's permissions, so an answer sent wherever a request said
 * could put controller-signed messages into the job stream (filling it for every organization).
 * Real controller and NATS (own prefix), a plain NATS client as the requester.
 */
import { randomUUID } from 'node:crypto';
import { connect, createInbox, type NatsConnection } from 'nats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentInbox, jobsSubject, natsNames } from '../../shared/src/nats/subjects';
import { startTestController, type TestController } from '../helpers/controller';
import { SHARED_NATS, dropNatsNamespace, natsPrefix, until } from './helpers';

const prefix = natsPrefix();
const names = natsNames(prefix);
let c: TestController;
let nc: NatsConnection;

beforeAll(async () => {
  c = await startTestController({ config: { natsUrl: SHARED_NATS, natsPrefix: prefix } });
  nc = await connect({ servers: SHARED_NATS, inboxPrefix: agentInbox(randomUUID()) });
});

afterAll(async () => {
  await nc?.close();
  await c?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

it('answers a request under an agent inbox, and never into a stream a request names as its reply subject', async () => {
  const orgJobs = jobsSubject(prefix, randomUUID(), 'default');
  nc.publish(names.heartbeatSubject, new TextEncoder().encode('not a signed request'), { reply: orgJobs });
  nc.publish(names.heartbeatSubject, new TextEncoder().encode('not a signed request'), { reply: createInbox() }); // _INBOX.<nuid>: no agent's
  // A request from an agent's inbox gets its (refusing, signed) answer: the subscription works
  // (retried until the controller's subscription is up).
  const answer = await until(
    'an answer under the agent inbox',
    () => nc.request(names.heartbeatSubject, new TextEncoder().encode('not a signed request'), { timeout: 1_000 }).catch(() => undefined),
    30_000,
  );
  expect(new TextDecoder().decode(answer.data)).toMatch(/^eyJ/);
  const jsm = await nc.jetstreamManager();
  expect((await jsm.streams.info(names.jobsStream)).state.messages).toBe(0);
});
