/**
 * A big deployment is claimed in chunks: its first devices get their jobs while the next pumps
 * claim the rest, back to back, and every device still gets exactly one job. No agent runs, so
 * the jobs stay queued and the devices stay in their running state.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import type { Org } from '../agents/helpers';
import { api, until, hostnameTemplate } from './helpers';

/** More than two pumps claim (the first claims 25, FIRST_CLAIM; the next up to 100, CLAIM_PER_PUMP). */
const DEVICES = 130;
let c: TestController;
let org: Org;

beforeAll(async () => {
  c = await startTestController();
  org = await c.createOrgUser(['org_admin']);
});

afterAll(async () => {
  await c?.close();
});

it(`claims a deployment of ${DEVICES} devices in pumps of 25 then 100, one job per device`, async () => {
  const profile = await api(
    c,
    org.token,
    'POST',
    '/api/profiles',
    { name: 'chunks', username: 'admin', password: 'admin', gnmi_port: 1, automation_transport: 'gnmi' },
    201,
  );
  const rows = Array.from({ length: DEVICES }, (_, i) => ({
    name: `chunk-${i}`,
    host: `10.77.${Math.floor(i / 200)}.${(i % 200) + 1}`,
    device_type: 'vendor_eos',
  }));
  expect((await api(c, org.token, 'POST', `/api/devices/import/json?profile_id=${profile.id}`, rows)).imported).toBe(DEVICES);
  const devices: { id: string }[] = await c.db('devices').where({ org_id: org.orgId }).whereLike('name', 'chunk-%').select('id');
  expect(devices).toHaveLength(DEVICES);
  const tpl = await hostnameTemplate(c, org.token);
  const stack = await api(
    c,
    org.token,
    'POST',
    '/api/config/stacks',
    { name: 'chunks', atomic: true, services: [{ template_id: tpl.id, order: 0, variables: { hostname: 'h' } }] },
    201,
  );
  const created = await api(
    c,
    org.token,
    'POST',
    '/api/config/deployments',
    { stack_id: stack.id, name: 'chunks', target_devices: devices.map((d) => ({ device_id: d.id })) },
    201,
  );

  const claimed = await until(
    'every device to have its job',
    async () => {
      const all = await c.db('deployment_devices').where({ deployment_id: created.id }).select('status', 'job_id');
      return all.every((d) => d.status === 'running' && d.job_id) ? all : undefined;
    },
    30_000,
    50,
  );
  expect(claimed).toHaveLength(DEVICES);
  const jobs = await c.db('jobs').where({ group_id: created.id }).select('id', 'device_id', 'kind');
  expect(jobs).toHaveLength(DEVICES);
  expect(new Set(jobs.map((j) => j.device_id)).size).toBe(DEVICES);
  expect(new Set(claimed.map((d) => d.job_id))).toEqual(new Set(jobs.map((j) => j.id)));
  // One submission per pump, in push order: the first 25 (sooner to the agents), then 100, then the rest.
  const submitted = (await api(c, org.token, 'GET', `/api/config/deployments/${created.id}/logs?limit=1000`)).logs
    .map((l: { message: string }) => l.message)
    .filter((m: string) => m.startsWith('Submitted'));
  expect(submitted).toEqual([
    "Submitted 25 deploy jobs to the devices' agents",
    "Submitted 100 deploy jobs to the devices' agents",
    "Submitted 5 deploy jobs to the devices' agents",
  ]);
});
