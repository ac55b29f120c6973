/**
 * The controller's results consumer after a reconnect to a NATS whose JetStream does not answer
 * yet, as when a cluster is still electing leaders. nats.js alone would read the consumer again
 * only after a random 15 to 45 s (half to one and a half of its pull's 30 s expiry), and in the
 * cluster bench result recording stalled for 42 s that way; the controller takes its consumer
 * again itself, every half second, so events flow once JetStream answers. A private nats-server,
 * stopped and started again on its port and store: first without JetStream, then with it.
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

  client = await connect({ servers: nats.url });
  // The server reads its streams back from the store just after it opens its port.
  const before = await until('the results consumer back from the store', () => resultsConsumer(client!), 30_000, 100);
  // Not a signed event: the controller refuses it, and acks it all the same (never recorded).
  await client.jetstream().publish(resultsSubject(names.prefix, randomUUID()), StringCodec().encode('not a signed event'));
  // 10 s: a guard well above the half second the controller takes, and below nats.js's 15 s at the least.
  const after = await until(
    'the controller to take the event',
    async () => {
      const c = await resultsConsumer(client!);
      return c.delivered > before.delivered && c.pending === 0 && c.unacked === 0 ? c : undefined;
    },
    10_000,
    100,
  );
  expect(after.delivered).toBe(before.delivered + 1);
});
