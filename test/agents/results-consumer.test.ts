/**
 * The controller's results consumer keeps taking agent events when nats.js alone would leave it
 * idle for half a minute or more: a private nats-server and a real controller, events published as
 * an agent would (unsigned here: the controller refuses them, and acks them all the same).
 *
 * - After a reconnect to a NATS whose JetStream does not answer yet (a cluster still electing
 *   leaders), nats.js reads the consumer again only after a random 15 to 45 s; in the cluster bench
 *   result recording stalled for 42 s that way. The controller takes its consumer again itself,
 *   every half second. The server is stopped and started again on its port and store: first
 *   without JetStream, then with it.
 * - When its pull is lost (the consumer deleted and created again), nats.js notices after two
 *   missed idle heartbeats, 30 s (44 s measured); the controller sees events waiting that none of
 *   its pulls takes and takes the consumer again within 5 to 10 s.
 */
import { randomUUID } from 'node:crypto';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { natsNames, resultsSubject } from '../../shared/src/nats/subjects';
import { startTestController, type TestController } from '../helpers/controller';
import { startNats, type NatsServer } from '../helpers/processes';
import { natsPrefix, sleep, until } from './helpers';

let nats: NatsServer;
let tc: TestController;
let client: NatsConnection | null = null;
const names = natsNames(natsPrefix());

beforeAll(async () => {
  nats = await startNats({ monitor: true });
  tc = await startTestController({ config: { natsUrl: nats.url, natsPrefix: names.prefix } });
});

afterAll(async () => {
  await client?.close();
  await tc?.close();
  await nats?.close();
});

/** The results consumer as the server sees it: events waiting, and handed out but not yet acked. */
async function resultsConsumer(nc: NatsConnection) {
  const info = await (await nc.jetstreamManager()).consumers.info(names.resultsStream, names.resultsConsumer);
  return { pending: info.num_pending, unacked: info.num_ack_pending, delivered: info.delivered.consumer_seq };
}

/** Publishes one event on the results stream as an agent would, and waits (at most `guardMs`) until the controller took and acked it. */
async function eventTaken(guardMs: number) {
  const before = await until('the results consumer', () => resultsConsumer(client!), 30_000, 100);
  await client!.jetstream().publish(resultsSubject(names.prefix, randomUUID()), StringCodec().encode('not a signed event'));
  return until(
    'the controller to take the event',
    async () => {
      const c = await resultsConsumer(client!);
      return c.delivered > before.delivered && c.pending === 0 && c.unacked === 0 ? { before, after: c } : undefined;
    },
    guardMs,
    100,
  );
}

/** The controller's connection is back on the server (it reconnects on its own). */
const controllerConnected = () => until('the controller to reconnect', async () => ((await nats.varz()).connections as number) >= 1, 30_000, 100);

it('takes agent events again within seconds once JetStream answers after a reconnect', { timeout: 90_000 }, async () => {
  await nats.kill();
  await nats.start({ jetstream: false });
  await controllerConnected();
  // nats.js has asked for the consumer on this server by now, and been refused.
  await sleep(1_000);
  await nats.kill();
  await nats.start();
  await controllerConnected();

  client ??= await connect({ servers: nats.url, maxReconnectAttempts: -1 });
  // 10 s: a guard well above the half second the controller takes, and below nats.js's 15 s at the least.
  const { before, after } = await eventTaken(10_000);
  expect(after.delivered).toBe(before.delivered + 1);
});

it('takes agent events again within seconds when its pull is lost: the consumer deleted and created again', { timeout: 90_000 }, async () => {
  client ??= await connect({ servers: nats.url, maxReconnectAttempts: -1 });
  const jsm = await client.jetstreamManager();
  await eventTaken(30_000); // the controller consumes
  const { config } = await jsm.consumers.info(names.resultsStream, names.resultsConsumer);
  await jsm.consumers.delete(names.resultsStream, names.resultsConsumer);
  await jsm.consumers.add(names.resultsStream, config);
  // 20 s: a guard above the controller's 5 to 10 s, and below nats.js's 30 s at the least.
  const { before, after } = await eventTaken(20_000);
  expect(after.delivered).toBe(before.delivered + 1);
});
