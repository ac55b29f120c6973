/**
 * Deployments of cli templates end to end: real controller and PostgreSQL, a real agent runtime
 * (in-process hub) with the real SSH CLI driver against the SSH simulator, whose running config
 * really changes in configuration mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestController } from '../helpers/controller';
import { api, cliDeployFixture, sshDevice, waitFor } from './helpers';

let f: Awaited<ReturnType<typeof cliDeployFixture>>;
let c: TestController;
let token: string;
let ntp: any;
let iface: any;

const PASSWORD = 'cli-deploy-pw';

beforeAll(async () => {
  f = await cliDeployFixture({ password: PASSWORD, name: 'cli rollout', configScale: 4 });
  ({ c, token } = f);
  ntp = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: 'ntp',
      platform: 'vendor_xe-netconf',
      config_format: 'cli',
      target_path: 'ntp',
      source: '{% for s in servers %}ntp server {{ s }}\n{% endfor %}',
    },
    201,
  );
  iface = await api(
    c,
    token,
    'POST',
    '/api/config/templates',
    {
      name: 'uplink',
      platform: 'vendor_xe-netconf',
      config_format: 'cli',
      target_path: 'uplink',
      source: 'interface GigabitEthernet0/1\n description {{ description }}\nexit\n{{ extra | default("") }}',
    },
    201,
  );
});

afterAll(async () => f?.close());

/** What the two services do to an IOS-like config, written by hand. */
function expectedAfter(original: string, servers: string[], description: string): string {
  const lines = original.replace(/\n$/, '').split('\n');
  let at = lines.indexOf('interface GigabitEthernet0/1') + 1;
  while (lines[at].startsWith(' ')) {
    if (lines[at].startsWith(' description ')) lines[at] = ` description ${description}`;
    at++;
  }
  lines.splice(lines.length - 1, 0, ...servers.map((s) => `ntp server ${s}`));
  return lines.join('\n') + '\n';
}

describe('deploy a cli stack over SSH', () => {
  it('backs up over SSH, types the services in order in configuration mode, verifies; rollback puts the backup back', async () => {
    const dev = await f.sim('cli-edge1');
    const original = dev.config();
    const device = await sshDevice(c, token, dev, PASSWORD, 'cli-edge1');
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      {
        name: 'cli',
        services: [
          { template_id: iface.id, order: 1, variables: { description: 'to core' } },
          { template_id: ntp.id, order: 0, variables: { servers: ['192.0.2.1', '192.0.2.2'] } },
        ],
      },
      201,
    );
    const res = await f.deploy(stack.id, [device.id]);
    expect(res.status, res.text).toBe(201);
    const done = await waitFor(c, token, res.body.id);
    expect(done.status, JSON.stringify(done.devices)).toBe('completed');
    expect(done.devices.map((d: any) => [d.service_name, d.status, d.transport])).toEqual([
      ['ntp', 'completed', 'ssh'],
      ['uplink', 'completed', 'ssh'],
    ]);

    // The simulator's own config is exactly the hand-made expectation; services went in push order.
    expect(dev.config()).toBe(expectedAfter(original, ['192.0.2.1', '192.0.2.2'], 'to core'));
    expect(dev.configLog).toEqual([
      'ntp server 192.0.2.1',
      'ntp server 192.0.2.2',
      'interface GigabitEthernet0/1',
      'description to core',
      'exit',
      'end',
    ]);
    // The backup, taken over SSH before anything changed, is the original config.
    expect(await f.backupText(device.id, done.devices[0].backup_config_id)).toBe(original);
    const logs = (await api(c, token, 'GET', `/api/config/deployments/${done.id}/logs?limit=1000`)).logs.map((l: any) => l.message).join('\n');
    expect(logs).toMatch(/deployed and verified \(pre-deployment backup: config version \d+\)/);
    expect(logs).toMatch(/^backup: \d+ bytes of cli running config over ssh, stored by the controller before any change$/m);

    await api(c, token, 'POST', `/api/config/deployments/${done.id}/rollback`);
    const rolled = await waitFor(c, token, done.id);
    expect(rolled.status).toBe('rolled_back');
    expect(dev.config()).toBe(original);
    // configure replace from the file copied over SCP.
    expect(dev.files.get('flash:switchboard-restore.cfg')).toBe(original);
  });

  it('a line the device refuses fails the deployment with the device message, and the device is restored', async () => {
    const dev = await f.sim('cli-edge2');
    const original = dev.config();
    const device = await sshDevice(c, token, dev, PASSWORD, 'cli-edge2');
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      {
        name: 'cli-bad',
        services: [
          { template_id: ntp.id, order: 0, variables: { servers: ['192.0.2.9'] } },
          { template_id: iface.id, order: 1, variables: { description: 'x', extra: 'frobnicate the uplink' } },
        ],
      },
      201,
    );
    const done = await waitFor(c, token, (await f.deploy(stack.id, [device.id])).body.id);
    expect(done.status).toBe('failed');
    for (const entry of done.devices) {
      expect(entry.status).toBe('failed');
      expect(entry.error_message).toMatch(
        new RegExp(
          String.raw`^push failed: .*rejected 'frobnicate the uplink': % Invalid input detected at '\^' marker\. \(line 5 of 5\); ` +
            'the device was restored from its pre-deployment backup$',
        ),
      );
    }
    expect(dev.config()).toBe(original);
    expect(dev.configLog).toContain('ntp server 192.0.2.9');
    expect(await f.backupText(device.id, done.devices[0].backup_config_id)).toBe(original);
  });

  it('atomic: a device that fails restores the other, changed one (XR-like commit dialect)', async () => {
    const good = await f.sim('cli-xr1', 'vendor_xr');
    const bad = await f.sim('cli-xr2', 'vendor_xr');
    const [goodOriginal, badOriginal] = [good.config(), bad.config()];
    const d1 = await sshDevice(c, token, good, PASSWORD, 'cli-xr1');
    const d2 = await sshDevice(c, token, bad, PASSWORD, 'cli-xr2');
    const stack = await api(
      c,
      token,
      'POST',
      '/api/config/stacks',
      { name: 'xr', services: [{ template_id: iface.id, order: 0, variables: { description: 'to core' } }] },
      201,
    );
    const done = await waitFor(
      c,
      token,
      (
        await f.deploy(stack.id, [d1.id, d2.id], {
          '0': { devices: [d1.id, d2.id], device_vars: { [d2.id]: { extra: 'frobnicate' } } },
        })
      ).body.id,
    );
    expect(done.status).toBe('failed');
    const byDevice = new Map(done.devices.map((d: any) => [d.device_id, d]));
    expect(byDevice.get(d1.id)).toMatchObject({ status: 'restored' });
    expect((byDevice.get(d2.id) as any).status).toBe('failed');
    expect((byDevice.get(d2.id) as any).error_message).toMatch(/rejected 'frobnicate': % Invalid input .*nothing was committed/);
    expect(good.config()).toBe(goodOriginal);
    expect(bad.config()).toBe(badOriginal);
    expect(good.configLog).toContain('commit replace confirmed 300');
  });

  it('refuses a cli template with operation delete before touching anything', async () => {
    const dev = await f.sim('cli-edge3');
    const device = await sshDevice(c, token, dev, PASSWORD, 'cli-edge3');
    const del = await api(
      c,
      token,
      'POST',
      '/api/config/templates',
      { name: 'del', platform: 'vendor_xe-netconf', config_format: 'cli', operation: 'delete', source: 'ntp server 192.0.2.1' },
      201,
    );
    const stack = await api(c, token, 'POST', '/api/config/stacks', { name: 'del', services: [{ template_id: del.id }] }, 201);
    const res = await f.deploy(stack.id, [device.id]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/is a cli template with operation delete; write the 'no …' lines/);
  });
});
