/**
 * The agent's side of deploy jobs' pre-deployment backups (agent/src/backup-store.ts): the backups
 * of jobs running together go to the controller in a few backup_store requests, each carrying
 * several jobs and signed once, and each job still gets its own answer; a job whose time is up
 * stops waiting while its request's other jobs wait on. Real controller, PostgreSQL, NATS and
 * gNMI simulator; requests are counted on NATS by a plain subscriber of the request subject.
 */
import { connect, type NatsConnection, type Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackupStore } from '../../agent/src/backup-store';
import type { AgentIdentity } from '../../agent/src/identity';
import { natsAgentLink } from '../../agent/src/nats-link';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  importAgentPrivateKey,
  importControllerPublicKey,
  signJsonDetached,
  unverifiedPayload,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import type { AgentLink } from '../../shared/src/jobs/link';
import type { BackupStoreRequest } from '../../shared/src/jobs/messages';
import { startTestController, type TestController } from '../helpers/controller';
import { startGnmiTarget, type GnmiTarget } from '../sim/gnmi/target';
import { SHARED_NATS, dropNatsNamespace, enrollAgent, natsPrefix, startAgent, type Org } from '../agents/helpers';
import { api, gnmiDevice, hostnameStack, waitFor } from './helpers';

const prefix = natsPrefix();
const DEVICES = 8;
let tc: TestController;
let org: Org;
const targets: GnmiTarget[] = [];
let identity: AgentIdentity;
let nc: NatsConnection;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  tc = await startTestController({
    config: { natsUrl: SHARED_NATS, natsPrefix: prefix, jobs: { sweepIntervalMs: 200 }, deployments: { sweepIntervalMs: 200, staleMs: 300 } },
  });
  org = await tc.createOrgUser(['org_admin']);
  identity = (await enrollAgent(tc, org)).identity;
  nc = await connect({ servers: SHARED_NATS });
});

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  await nc?.close();
  await tc?.close();
  await Promise.all(targets.map((t) => t.close()));
  await dropNatsNamespace(SHARED_NATS, prefix);
});

/** Every backup_store request published on `subject` from now on, as the agent signed it. */
function backupRequests(subject: string): { requests: BackupStoreRequest[]; sub: Subscription } {
  const requests: BackupStoreRequest[] = [];
  const sub = nc.subscribe(subject, {
    callback: (_err, msg) => {
      const payload = unverifiedPayload(msg.string()) as { type?: string };
      if (payload?.type === 'backup_store') requests.push(payload as BackupStoreRequest);
    },
  });
  closing.push(async () => sub.unsubscribe());
  return { requests, sub };
}

/**
 * The agent's BackupStore over its own NATS link (`subject`: where its requests go); `sent`
 * hears the jobs each request it signs carries.
 */
async function backupStore(subject = identity.nats.heartbeat_subject, sent?: (jobIds: string[]) => void): Promise<BackupStore> {
  const link: AgentLink = await natsAgentLink(SHARED_NATS, { ...identity, nats: { ...identity.nats, heartbeat_subject: subject } });
  closing.push(() => link.close());
  const { sign } = await importAgentPrivateKey(identity.private_jwk);
  const controller = importControllerPublicKey(identity.controller_key);
  return new BackupStore({
    agentId: identity.agent_id,
    link,
    sign: (request) => {
      sent?.(request.backups.map((b) => b.job_id));
      return signJsonDetached(request, sign, AGENT_SIGN_ALG, identity.agent_id);
    },
    verify: (token) => verifyJson(token, controller, CONTROLLER_SIGN_ALG),
  });
}

const backup = (text: string) => ({ text, format: 'json' as const, via: 'gnmi' as const });

describe("deploy jobs' pre-deployment backups from the agent", () => {
  it('go in fewer requests than jobs when the jobs run together, each job stored once and answered', async () => {
    const { requests } = backupRequests(identity.nats.heartbeat_subject);
    const agent = await startAgent(tc, identity, { natsUrl: SHARED_NATS, concurrency: DEVICES });
    closing.push(() => agent.stop());
    const devices = [];
    for (let i = 0; i < DEVICES; i++) {
      targets.push(await startGnmiTarget({ initialTree: { system: { config: { hostname: `before-${i}` } } } }));
      devices.push(await gnmiDevice(tc, org.token, targets[i], `gather-${i}`));
    }
    const stack = await hostnameStack(tc, org.token, 'gather', 'after');
    const created = await api(
      tc,
      org.token,
      'POST',
      '/api/config/deployments',
      { stack_id: stack.id, name: 'gather', target_devices: devices.map((d) => ({ device_id: d.id })) },
      201,
    );
    const done = await waitFor(tc, org.token, created.id);
    expect(done.status).toBe('completed');

    const jobs = new Set(requests.flatMap((r) => r.backups.map((b) => b.job_id)));
    expect(jobs.size).toBe(DEVICES);
    expect(requests.length).toBeLessThan(DEVICES);
    expect(Math.max(...requests.map((r) => r.backups.length))).toBeGreaterThan(1);
    // Each device's backup stored once, before its change.
    const versions = await tc
      .db('config_versions')
      .whereIn(
        'device_id',
        devices.map((d) => d.id),
      )
      .where({ source: 'deployment' })
      .select('device_id', 'config_text');
    expect(versions).toHaveLength(DEVICES);
    for (const v of versions) {
      const i = devices.findIndex((d) => d.id === v.device_id);
      expect(JSON.parse(v.config_text)).toMatchObject({ system: { config: { hostname: `before-${i}` } } });
    }
  });

  it("stops waiting at a job's own time while its request's other jobs wait on", async () => {
    // A controller that takes the requests and never answers.
    const silent = `${prefix}.silent`;
    const { requests } = backupRequests(silent);
    const store = await backupStore(silent);
    const start = Date.now();
    const ended = (p: Promise<unknown>) =>
      p.then(
        () => ({ at: Date.now() - start, error: null }),
        (err: Error) => ({ at: Date.now() - start, error: err.message }),
      );
    const [soon, later] = await Promise.all([
      ended(store.store({ job_id: 'soon', attempt: 1 }, backup('{}'), start + 300)),
      ended(store.store({ job_id: 'later', attempt: 1 }, backup('{}'), start + 2_500)),
    ]);
    expect(soon.error).toBe('no controller stored it in time; nothing was changed');
    expect(later.error).toBe('no controller stored it in time; nothing was changed');
    // Not held back by the other job's request (it waits up to 2.5 s for a reply).
    expect(soon.at).toBeLessThan(1_000);
    expect(later.at).toBeGreaterThanOrEqual(2_000);
    // Both went in one request, waited for as long as the later job may wait.
    expect(requests.map((r) => r.backups.map((b) => b.job_id))).toEqual([['soon', 'later']]);
  });

  it('asks again with backoff while no controller is there, the jobs of the moment together, until their time is up', async () => {
    const asked: string[][] = [];
    const store = await backupStore(`${prefix}.nobody`, (jobIds) => asked.push(jobIds));
    const start = Date.now();
    const results = await Promise.allSettled(
      ['a', 'b', 'c'].map((job) => store.store({ job_id: job, attempt: 1 }, backup(`{"${job}": 1}`), start + 1_000)),
    );
    expect(results.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(
      Array(3).fill('no controller stored it in time; nothing was changed'),
    );
    // The jobs of the moment in one request.
    expect(asked[0]).toEqual(['a', 'b', 'c']);
    // Each job asked again 100, 200, 400 ms apart: four times at most in its second, at least
    // twice (fewer on a slow machine). A busy machine may wake the three retries in different
    // turns and so split a round into several requests; each job's own count holds regardless.
    for (const job of ['a', 'b', 'c']) {
      const times = asked.filter((ids) => ids.includes(job)).length;
      expect(times, job).toBeGreaterThanOrEqual(2);
      expect(times, job).toBeLessThanOrEqual(4);
    }
  });

  it("fails a job the controller refuses, with the controller's reason", async () => {
    const store = await backupStore();
    await expect(store.store({ job_id: '00000000-0000-4000-8000-000000000000', attempt: 1 }, backup('{}'), Date.now() + 5_000)).rejects.toThrow(
      'the controller did not store it: the deploy job is not open',
    );
  });
});
