/**
 * A deploy job redelivered after its agent died in the middle of the push: real agent processes
 * (`npm run agent`) over the machine's NATS (own prefix), the first SIGKILLed while the SSH
 * simulator holds the push half-typed. The second attempt reads the half-changed config, but the
 * controller answers its store request with the backup the first attempt stored before changing
 * anything: that stays the pre-deployment backup, the push completes, rollback restores it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { SHARED_NATS, dropNatsNamespace, natsPrefix, until, type Org } from '../agents/helpers';
import { spawnAgent, type Proc } from '../helpers/processes';
import { api, sshDevice, waitFor } from './helpers';

const prefix = natsPrefix();
const PASSWORD = 'redeliver-pw';
let tc: TestController;
let org: Org;
let dev: SimSshDevice;
const procs: Proc[] = [];

beforeAll(async () => {
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 3 },
    config: {
      natsUrl: SHARED_NATS,
      natsPrefix: prefix,
      jobs: { sweepIntervalMs: 200, ackWaitMs: 2_000 },
      deployments: { sweepIntervalMs: 200, staleMs: 300 },
    },
  });
  org = await tc.createOrgUser(['org_admin']);
  // The device takes two config lines per session and then hangs: the push is half done.
  dev = await startSshDevice({ hostname: 'redeliver', password: PASSWORD, configScale: 4, faults: { stallConfigAfter: 2 } });
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await dev?.close();
  await tc?.close();
  await dropNatsNamespace(SHARED_NATS, prefix);
});

async function agentProcess(name: string): Promise<{ id: string; proc: Proc }> {
  const created = await api(tc, org.token, 'POST', '/api/agents', { name, site_id: null }, 201);
  const proc = spawnAgent({
    NATS_URL: SHARED_NATS,
    SWITCHBOARD_URL: tc.url,
    SWITCHBOARD_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), 'sb-agent-state-')),
    SWITCHBOARD_AGENT_CONCURRENCY: '2',
    SWITCHBOARD_ENROLL_TOKEN: created.enrollment_token,
  });
  procs.push(proc);
  await until(
    `agent ${name} online`,
    async () => {
      const list = await api(tc, org.token, 'GET', '/api/agents');
      return list.agents.find((a: any) => a.id === created.id)?.status === 'online';
    },
    60_000,
  );
  return { id: created.id, proc };
}

it('keeps the pre-change backup when the deploy job is redelivered after its agent was SIGKILLed mid-push', { timeout: 180_000 }, async () => {
  const original = dev.config();
  const first = await agentProcess('victim');
  const device = await sshDevice(tc, org.token, dev, PASSWORD, 'redeliver');
  const tpl = await api(
    tc,
    org.token,
    'POST',
    '/api/config/templates',
    {
      name: 'ntp',
      platform: 'vendor_xe-netconf',
      config_format: 'cli',
      source: 'ntp server 192.0.2.1\nntp server 192.0.2.2\nntp server 192.0.2.3\nntp server 192.0.2.4',
    },
    201,
  );
  const stack = await api(tc, org.token, 'POST', '/api/config/stacks', { name: 'ntp', services: [{ template_id: tpl.id }] }, 201);
  const created = await api(
    tc,
    org.token,
    'POST',
    '/api/config/deployments',
    { stack_id: stack.id, name: 'half', target_devices: [{ device_id: device.id }] },
    201,
  );

  // The push is stuck after two lines: the device's running config is already changed.
  await until('the push to hang half typed', () => dev.configLog.length >= 3, 60_000);
  const half = dev.config();
  expect(half).toContain('ntp server 192.0.2.2\n');
  expect(half).not.toBe(original);
  const during = await api(tc, org.token, 'GET', `/api/config/deployments/${created.id}`);
  expect(during.devices[0]).toMatchObject({ status: 'running', backup_config_id: expect.any(String) });
  const backupId = during.devices[0].backup_config_id;

  await first.proc.kill('SIGKILL');
  dev.setFaults({});
  await agentProcess('survivor');

  const done = await waitFor(tc, org.token, created.id, ['completed', 'failed', 'rolled_back'], 120_000);
  expect(done.status, JSON.stringify(done.devices)).toBe('completed');
  // Same backup as before the kill, and it is the config from before anything changed.
  expect(done.devices[0].backup_config_id).toBe(backupId);
  const versions = await tc.db('config_versions').where({ device_id: device.id, source: 'deployment' }).select('id', 'config_text');
  expect(versions.map((v: any) => v.id)).toEqual([backupId]);
  expect(versions[0].config_text).toBe(original);
  expect(dev.config()).toContain('ntp server 192.0.2.4\n');

  // The survivor finished the job the victim had started, against the stored backup, storing none.
  const job = await tc
    .db('jobs')
    .where({ id: (await tc.db('deployment_devices').where({ deployment_id: created.id }).first('job_id')).job_id })
    .first();
  expect(job.agent_id).not.toBe(first.id);
  // The survivor's lines are in the deployment log (sent with its result, or before it through job_logs).
  const messages = (await api(tc, org.token, 'GET', `/api/config/deployments/${created.id}/logs?limit=1000`)).logs.map((l: any) => l.message);
  expect(
    messages.some((t: string) => /the controller keeps an earlier attempt's backup/.test(t)),
    messages.join('\n'),
  ).toBe(true);

  await api(tc, org.token, 'POST', `/api/config/deployments/${created.id}/rollback`);
  expect((await waitFor(tc, org.token, created.id, ['rolled_back', 'failed'], 120_000)).status).toBe('rolled_back');
  expect(dev.config()).toBe(original);
});
