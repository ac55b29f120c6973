/**
 * The controller process SIGKILLed in the middle of a batch and started again (`npm run
 * controller` as a real process, over NATS, with two real agent processes): every job ends,
 * each device's outcome recorded exactly once (one config version per backup job), none stuck.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SettingsService } from '../../controller/src/platform/settings-service';
import { SettingsStore } from '../../controller/src/platform/settings-store';
import type { ControllerConfig } from '../../controller/src/config';
import { createDb, type Db } from '../../controller/src/db/knex';
import { createJobEngine } from '../../controller/src/jobs';
import { AgentsStore } from '../../controller/src/agents/store';
import { loadDeviceTargets } from '../../controller/src/profiles/credentials';
import type { JobEngine } from '../../controller/src/jobs/engine';
import { SecretBox } from '../../shared/src/crypto/secret-box';
import { createTestDatabase } from '../helpers/postgres';
import { freePort } from '../helpers/net';
import { spawnAgent, spawnTs, type Proc } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, apiClient, dropNatsNamespace, makeDevice, makeProfile, sleep, until, type Api, type Org } from './helpers';

const prefix = `t${randomBytes(5).toString('hex')}`;
const secretKey = randomBytes(32);
const dataDir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Db;
let submitter: JobEngine;
let env: Record<string, string>;
let api: Api;
const procs: Proc[] = [];
const sims: SimSshDevice[] = [];

function startController(): Proc {
  const p = spawnTs('controller/src/main.ts', env);
  procs.push(p);
  return p;
}

async function up(p: Proc): Promise<void> {
  await until(
    'the controller to answer',
    async () => {
      if (p.child.exitCode !== null) throw new Error(`controller exited: ${p.output()}`);
      return (await api.request('GET', '/api/auth/providers')).status === 200;
    },
    90_000,
    200,
  );
}

beforeAll(async () => {
  database = await createTestDatabase();
  const port = await freePort();
  env = {
    DATABASE_URL: database.url,
    NATS_URL: SHARED_NATS,
    PORT: String(port),
    HOST: '127.0.0.1',
    SWITCHBOARD_DATA_DIR: dataDir,
    SWITCHBOARD_SECRET_KEY: secretKey.toString('hex'),
    SWITCHBOARD_ADMIN_PASSWORD: 'restart-admin-password-1',
    SWITCHBOARD_NATS_PREFIX: prefix,
    SWITCHBOARD_JOB_ACK_WAIT_SECONDS: '2',
    SWITCHBOARD_JOB_SWEEP_MS: '200',
    LOG_LEVEL: 'warn',
  };
  api = apiClient(`http://127.0.0.1:${port}`);
  db = await createDb(database.url, dataDir);
  // A submit-only replica in the test process: it stores and publishes jobs but records nothing.
  const secrets = new SecretBox(secretKey);
  const config = { natsUrl: SHARED_NATS, natsPrefix: prefix, secretKey, dataDir } as ControllerConfig;
  submitter = createJobEngine({
    config,
    db,
    log: pino({ level: 'silent' }),
    settings: new SettingsService(new SettingsStore(db), secrets),
    agents: new AgentsStore(db),
    targets: (q, orgId, ids) => loadDeviceTargets(q, secrets, orgId, ids),
    authority: null,
  }).engine;
  for (let i = 0; i < 2; i++)
    sims.push(await startSshDevice({ hostname: `cr-${i}`, password: 'cr-pw', faults: { slowOutput: { chunkBytes: 512, intervalMs: 40 } } }));
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await submitter?.transport.close();
  await Promise.all(sims.map((s) => s.close()));
  await db?.destroy();
  await database?.drop();
  await dropNatsNamespace(SHARED_NATS, prefix);
  rmSync(dataDir, { recursive: true, force: true });
});

it('finishes a batch across a controller SIGKILL and restart: every job ends, each outcome recorded once', { timeout: 300_000 }, async () => {
  const first = startController();
  await up(first);
  const login = await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'restart-admin-password-1' } });
  expect(login.status).toBe(200);
  const token = login.body.access_token as string;
  const me = await api.request('GET', '/api/auth/me', { token });
  const org: Org = { orgId: me.body.org_id, token };
  expect(
    (
      await api.request('PUT', '/api/admin/settings', {
        token,
        body: { settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 } },
      })
    ).status,
  ).toBe(200);

  const agentIds: string[] = [];
  for (const name of ['cr-a', 'cr-b']) {
    const res = await api.request('POST', '/api/agents', { token, body: { name, site_id: null } });
    expect(res.status).toBe(201);
    agentIds.push(res.body.id);
    procs.push(
      spawnAgent({
        NATS_URL: SHARED_NATS,
        SWITCHBOARD_URL: api.url,
        SWITCHBOARD_ENROLL_TOKEN: res.body.enrollment_token,
        SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-cr-')),
        SWITCHBOARD_AGENT_CONCURRENCY: '2',
      }),
    );
  }
  await until(
    'both agents online',
    async () => {
      const list = await api.request('GET', '/api/agents', { token });
      return agentIds.every((id) => list.body.agents.find((a: any) => a.id === id)?.status === 'online');
    },
    90_000,
  );

  const profiles = await Promise.all(sims.map((s) => makeProfile(api, org, { ssh_port: s.port, password: 'cr-pw' })));
  const devices: string[] = [];
  for (let i = 0; i < 6; i++) devices.push(await makeDevice(api, org, { profile_id: profiles[i % 2] }));
  // Two jobs per device: each second job can only be dispatched once the first is recorded.
  const specs = [...devices, ...devices].map((deviceId) => ({
    orgId: org.orgId,
    kind: 'backup' as const,
    deviceId,
    params: { methods: ['cli' as const] },
    deadlineMs: 240_000,
  }));
  const ids = await submitter.submit(specs);
  await submitter.kick();

  await until(
    'a part of the batch to be recorded',
    async () => {
      const rows = await db('jobs').whereIn('id', ids).select('status');
      return rows.filter((r) => r.status === 'succeeded').length >= 2;
    },
    120_000,
    50,
  );
  await first.kill('SIGKILL');
  const open = await db('jobs').whereIn('id', ids).whereIn('status', ['queued', 'dispatched', 'running']).count<{ count: number }[]>('id as count');
  expect(Number(open[0].count)).toBeGreaterThan(0); // really mid-batch
  await sleep(3_000); // agents keep working and publishing while no controller runs

  const second = startController();
  await up(second);
  const outcomes = await submitter.wait(ids, 240_000);
  expect(outcomes.map((o) => [o.status, o.error])).toEqual(ids.map(() => ['succeeded', null]));
  // Exactly once: one config version per backup job (recorded by the configs area's handler).
  const versions = await db('config_versions').whereIn('job_id', ids).select('job_id');
  expect(versions.map((v) => v.job_id).sort()).toEqual([...ids].sort());
  expect(await db('jobs').whereIn('id', ids).where('record_failures', '>', 0).count<{ count: number }[]>('id as count')).toEqual([{ count: 0 }]);
});
