/**
 * deploy/nats-cluster/: the three node configs pass `nats-server -t`, and, moved to loopback
 * ports and temp stores (nothing else changed), they form one cluster whose controller user
 * creates the job streams with three replicas (SWITCHBOARD_NATS_REPLICAS=3).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { connect } from 'nats';
import { afterAll, expect, it } from 'vitest';
import { NatsJobTransport } from '../../controller/src/jobs/nats-transport';
import { natsNames } from '../../shared/src/nats/subjects';
import { freePort } from '../helpers/net';
import { NATS_SERVER, ROOT, spawnProcess, stopAll, waitUntil } from '../helpers/processes';
import { DEFAULT_TUNABLES, resultsIntake } from '../../controller/src/jobs';

const DIR = join(ROOT, 'deploy/nats-cluster');
const NODES = ['n1', 'n2', 'n3'];
const env = { NATS_CONTROLLER_PASSWORD: 'cluster-controller-pw' };

const dir = mkdtempSync(join(tmpdir(), 'sb-nats-deploy-'));

afterAll(async () => {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

it('passes nats-server -t for every node', async () => {
  for (const node of NODES) {
    const p = spawnProcess(NATS_SERVER, ['-t', '-c', join(DIR, `${node}.conf`)], { env });
    expect(await p.exited, p.output()).toBe(0);
    expect(p.output()).toMatch(/is valid/);
  }
});

it('forms a cluster on which the controller user creates R3 job streams', { timeout: 90_000 }, async () => {
  const ports = await Promise.all(NODES.map(async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })));
  copyFileSync(join(DIR, 'auth.conf'), join(dir, 'auth.conf'));
  const procs = NODES.map((node, i) => {
    let conf = readFileSync(join(DIR, `${node}.conf`), 'utf8')
      .replace('listen: 0.0.0.0:4222', `listen: 127.0.0.1:${ports[i].client}`)
      .replace('listen: 0.0.0.0:6222', `listen: 127.0.0.1:${ports[i].route}`)
      .replace('http: 127.0.0.1:8222', `http: 127.0.0.1:${ports[i].monitor}`)
      .replace('store_dir: /data/jetstream', `store_dir: "${join(dir, node)}"`);
    NODES.forEach((_, k) => (conf = conf.replace(`nats-route://nats-${k + 1}:6222`, `nats-route://127.0.0.1:${ports[k].route}`)));
    writeFileSync(join(dir, `${node}.conf`), conf);
    return spawnProcess(NATS_SERVER, ['-c', join(dir, `${node}.conf`)], { env });
  });
  await waitUntil(
    'a JetStream meta leader the three agree on',
    async () => {
      const leaders = await Promise.all(
        ports.map(
          async (p) =>
            ((await (await fetch(`http://127.0.0.1:${p.monitor}/jsz`)).json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader,
        ),
      );
      return leaders.every((l) => l && l === leaders[0]);
    },
    procs[0],
    60_000,
  );

  const url = ports
    .map((p, i) => (i === 0 ? `nats://controller:${env.NATS_CONTROLLER_PASSWORD}@127.0.0.1:${p.client}` : `nats://127.0.0.1:${p.client}`))
    .join(',');
  const names = natsNames();
  const controller = new NatsJobTransport(url, names, 30_000, resultsIntake(DEFAULT_TUNABLES), pino({ level: 'silent' }), 3);
  await controller.connect();
  const nc = await connect({ servers: `127.0.0.1:${ports[1].client}`, user: 'controller', pass: env.NATS_CONTROLLER_PASSWORD });
  try {
    const info = await (await nc.jetstreamManager()).streams.info(names.jobsStream);
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas?.length).toBe(2);
  } finally {
    await nc.close();
    await controller.close();
  }
  // Without the password no client gets in: the nodes share the auth.conf users.
  await expect(connect({ servers: `127.0.0.1:${ports[2].client}` })).rejects.toThrow(/Authorization/i);
});
