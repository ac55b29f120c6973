/**
 * SWITCHBOARD_NATS_REPLICAS: the controller creates the job streams with that many replicas,
 * rescales streams an agent created first (agents never pass a count and leave streams as they
 * are), and refuses to start with a message naming the setting when the server cannot hold them.
 */
import pino from 'pino';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NatsJobTransport } from '../../controller/src/jobs/nats-transport';
import { natsReplicasOf } from '../../controller/src/jobs';
import type { ControllerConfig } from '../../controller/src/config';
import { ensureStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';
import { startNatsCluster, stopAll, type NatsCluster } from '../helpers/processes';
import { SHARED_NATS, dropNatsNamespace, natsPrefix } from './helpers';
import { DEFAULT_TUNABLES, resultsIntake } from '../../controller/src/jobs';

const silent = pino({ level: 'silent' });
let cluster: NatsCluster;
let nc: NatsConnection;

beforeAll(async () => {
  cluster = await startNatsCluster(3);
  nc = await connect({ servers: cluster.url.split(',') });
});

afterAll(async () => {
  await nc?.close();
  await stopAll();
});

const replicasOf = async (names: ReturnType<typeof natsNames>) => {
  const jsm = await nc.jetstreamManager();
  return Promise.all([names.jobsStream, names.resultsStream].map(async (s) => (await jsm.streams.info(s)).config.num_replicas));
};

it('scales streams an agent created with one replica up to the controller count; agents leave them so', async () => {
  const names = natsNames(natsPrefix());
  const jsm = await nc.jetstreamManager();
  await ensureStreams(jsm, names); // an agent that came first
  expect(await replicasOf(names)).toEqual([1, 1]);

  const controller = new NatsJobTransport(cluster.url, names, 30_000, resultsIntake(DEFAULT_TUNABLES), silent, 3);
  await controller.connect();
  expect(await replicasOf(names)).toEqual([3, 3]);
  await ensureStreams(jsm, names); // an agent starting later
  expect(await replicasOf(names)).toEqual([3, 3]);
  await controller.close();
});

it('refuses more replicas than a single server holds, naming the setting', async () => {
  const prefix = natsPrefix();
  const controller = new NatsJobTransport(SHARED_NATS, natsNames(prefix), 30_000, resultsIntake(DEFAULT_TUNABLES), silent, 3);
  try {
    await expect(controller.connect()).rejects.toThrow(/SWITCHBOARD_NATS_REPLICAS=3: .*NATS cluster with JetStream on at least 3 servers/);
  } finally {
    await controller.close();
    await dropNatsNamespace(SHARED_NATS, prefix);
  }
});

it('reads SWITCHBOARD_NATS_REPLICAS: default 1, a whole number from 1 to 5', () => {
  const config = {} as ControllerConfig;
  const saved = process.env.SWITCHBOARD_NATS_REPLICAS;
  try {
    delete process.env.SWITCHBOARD_NATS_REPLICAS;
    expect(natsReplicasOf(config)).toBe(1);
    process.env.SWITCHBOARD_NATS_REPLICAS = '3';
    expect(natsReplicasOf(config)).toBe(3);
    process.env.SWITCHBOARD_NATS_REPLICAS = 'three';
    expect(() => natsReplicasOf(config)).toThrow('SWITCHBOARD_NATS_REPLICAS must be a whole number from 1 to 5, got "three"');
  } finally {
    if (saved === undefined) delete process.env.SWITCHBOARD_NATS_REPLICAS;
    else process.env.SWITCHBOARD_NATS_REPLICAS = saved;
  }
});
