/**
 * cli templates deployed to Junos-like devices end to end: real controller and PostgreSQL, a real
 * agent runtime with the real SSH CLI driver against the SSH simulator, whose Junos-like
 * configuration mode really edits a candidate and commits it (`configure`, set lines, `commit`;
 * `rollback 0` on a refused line; `load override terminal` for restore and rollback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestController } from '../helpers/controller';
import { api, cliDeployFixture, sshDevice, waitFor } from './helpers';

let f: Awaited<ReturnType<typeof cliDeployFixture>>;
let c: TestController;
let token: string;
let edge: any;

const PASSWORD = 'junos-deploy-pw';

/** What the template below does to the simulator's Junos-like config, written by hand. */
function expectedAfter(original: string, server: string, description: string): string {
  const withServer = original.replace(/(\n {4}ntp \{\n {8}server [^\n]+\n)/, `$1        server ${server};\n`);
  const out = withServer.replace(/(\n {4}ge-0\/0\/1 \{\n {8}description )"[^"]*";/, `$1"${description}";`);
  expect(out).toContain(`        server ${server};\n`);
  expect(out).toContain(`description "${description}";`);
  return out;
}

beforeAll(async () => {
  f = await cliDeployFixture({ password: PASSWORD, name: 'junos rollout', configScale: 3 });
  ({ c, token } = f);
  edge = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: 'junos-edge',
      platform: 'vendor_junos-netconf',
      config_format: 'cli',
      target_path: 'edge',
      source: 'set system ntp server {{ server }}\nset interfaces ge-0/0/1 description "{{ description }}"\n{{ extra | default("") }}',
    },
    201,
  );
});

afterAll(async () => f?.close());

describe('deploy a cli stack to Junos-like devices over SSH', () => {
  it('backs up, types the set lines in one configure session and commits; rollback loads the backup back', async () => {
    const dev = await f.sim('jdep-1', 'vendor_junos');
    const original = dev.config();
    const device = await sshDevice(c, token, dev, PASSWORD, 'jdep-1');
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      { name: 'junos', services: [{ template_id: edge.id, order: 0, variables: { server: '192.0.2.10', description: 'to core' } }] },
      201,
    );
    const res = await f.deploy(stack.id, [device.id]);
    expect(res.status, res.text).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    expect(done.devices.map((d: any) => [d.status, d.transport])).toEqual([['completed', 'ssh']]);

    expect(dev.config()).toBe(expectedAfter(original, '192.0.2.10', 'to core'));
    expect(dev.configLog).toEqual([
      'set system ntp server 192.0.2.10',
      'set interfaces ge-0/0/1 description "to core"',
      'commit confirmed 5',
      'commit',
      'exit configuration-mode',
    ]);
    expect(await f.backupText(device.id, done.devices[0].backup_config_id)).toBe(original);

    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    const rolled = await waitFor(c, token, done.id);
    expect(rolled.status, JSON.stringify(rolled.devices)).toBe('rolled_back');
    expect(dev.config()).toBe(original);
    expect(dev.configLog.slice(-4)).toEqual(['load override terminal', 'commit confirmed 5', 'commit', 'exit configuration-mode']);
  });

  it('atomic: the second device refuses a line (nothing committed there), the first is restored and equals its backup', async () => {
    const good = await f.sim('jdep-2', 'vendor_junos');
    const bad = await f.sim('jdep-3', 'vendor_junos');
    const [goodOriginal, badOriginal] = [good.config(), bad.config()];
    const d1 = await sshDevice(c, token, good, PASSWORD, 'jdep-2');
    const d2 = await sshDevice(c, token, bad, PASSWORD, 'jdep-3');
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      { name: 'junos-atomic', services: [{ template_id: edge.id, order: 0, variables: { server: '192.0.2.20', description: 'to core' } }] },
      201,
    );
    expect(stack.atomic).toBe(true);
    const done = await waitFor(
      c,
      token,
      (
        await f.deploy(stack.id, [d1.id, d2.id], {
          '0': { devices: [d1.id, d2.id], device_vars: { [d2.id]: { extra: 'set frobnicate the widgets' } } },
        })
      ).body.id,
    );
    expect(done.status).toBe('failed');
    const byDevice = new Map<string, any>(done.devices.map((d: any) => [d.device_id, d]));
    expect(byDevice.get(d1.id), JSON.stringify(done.devices)).toMatchObject({ status: 'restored' });
    expect(byDevice.get(d2.id)).toMatchObject({ status: 'failed' });
    expect(byDevice.get(d2.id).error_message).toMatch(/rejected 'set frobnicate the widgets': syntax error\. \(line 3 of 3; nothing was committed\)/);

    // The first device took the change, then got its backup back by load override.
    expect(good.configLog).toEqual([
      'set system ntp server 192.0.2.20',
      'set interfaces ge-0/0/1 description "to core"',
      'commit confirmed 5',
      'commit',
      'exit configuration-mode',
      'load override terminal',
      'commit confirmed 5',
      'commit',
      'exit configuration-mode',
    ]);
    expect(await f.backupText(d1.id, byDevice.get(d1.id).backup_config_id)).toBe(goodOriginal);
    expect(good.config()).toBe(goodOriginal);
    // The second never committed: rollback 0 threw its candidate away.
    expect(bad.configLog.slice(-2)).toEqual(['rollback 0', 'exit configuration-mode']);
    expect(bad.config()).toBe(badOriginal);
    const logs = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`)).logs.map((l: any) => l.message).join('\n');
    expect(logs).toMatch(/the running config equals the backup/);
  });
});
