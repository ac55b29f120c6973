/**
 * The SSH CLI driver changing configurations against the simulator: apply() in configuration
 * mode per dialect (enter, lines, error markers, commit, leave) and restore() with replace
 * semantics (SCP + configure replace, or commit replace), checked on the simulator's own config.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { sshCliDriver } from '../../agent/src/drivers/ssh';
import { getDialect } from '../../agent/src/drivers/ssh/dialects';
import { DriverError, type ConfigChange } from '../../agent/src/drivers/types';
import { sshTarget, startSshDevice, type SimSshDevice } from '../sim/ssh';

const CREDS = { username: 'admin', password: 'sim-pass', enable_password: 'sim-enable' };
const DEVICE = { username: 'admin', password: 'sim-pass', enablePassword: 'sim-enable', configScale: 4 };

const started: SimSshDevice[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
});

async function device(dialect: string, hostname: string): Promise<SimSshDevice> {
  const dev = await startSshDevice({ ...DEVICE, dialect, hostname });
  started.push(dev);
  return dev;
}

const cli = (config: string, target_path: string | null = null): ConfigChange => ({ config, config_format: 'cli', operation: 'merge', target_path });

/** The expected config after the change below: the edits a person would make by hand. */
function edited(config: string, hostname: string, newName: string, iface: string, indent: string): string {
  const lines = config.replace(/\n$/, '').split('\n');
  lines[lines.indexOf(`hostname ${hostname}`)] = `hostname ${newName}`;
  let at = lines.indexOf(`interface ${iface}`);
  expect(at, `interface ${iface} in the simulator's config`).toBeGreaterThanOrEqual(0);
  at++;
  while (lines[at]?.startsWith(' ')) {
    if (lines[at].trim().startsWith('description ')) lines[at] = `${indent}description managed by switchboard`;
    at++;
  }
  const end = lines[lines.length - 1] === 'end' ? lines.length - 1 : lines.length;
  lines.splice(end, 0, 'ntp server 192.0.2.123');
  return lines.join('\n') + '\n';
}

const IFACE: Record<string, [string, string]> = {
  vendor_ios: ['GigabitEthernet0/1', ' '],
  vendor_xe: ['GigabitEthernet1/0/2', ' '],
  vendor_nxos: ['Ethernet1/1', '  '],
  vendor_eos: ['Ethernet1', '   '],
  vendor_xr: ['GigabitEthernet0/0/0/1', ' '],
};

describe('apply and restore per dialect', () => {
  for (const [dialect, [iface, indent]] of Object.entries(IFACE)) {
    it(`${dialect}: lines change the running config (prompt follows the new hostname); restore puts the backup back`, async () => {
      const host = `cfg-${dialect.slice(7)}`;
      const dev = await device(dialect, host);
      const original = dev.config();
      const s = await sshCliDriver.open(sshTarget(dev, CREDS));
      try {
        const backup = await s.fetchConfig();
        expect(backup.text).toBe(original);
        await s.apply([
          cli(`hostname ${host}-new\ninterface ${iface}\n description managed by switchboard\nexit`, 'system'),
          cli('ntp server 192.0.2.123', 'ntp'),
        ]);
        const expected = edited(original, host, `${host}-new`, iface, indent);
        expect(dev.config()).toBe(expected);
        // Left configuration mode; the session goes on under the new prompt.
        expect((await s.fetchConfig()).text).toBe(expected);

        await s.restore(backup);
        expect(dev.config()).toBe(original);
        expect((await s.fetchConfig()).text).toBe(original);
        expect(await s.run('show version')).toBeTruthy();
      } finally {
        await s.close();
      }
    });
  }
});

describe('errors', () => {
  it('knows refusals beyond "% Invalid input": NX-OS ERROR:, an IOS address overlap, an EOS command the platform lacks', () => {
    const refuses = (deviceType: string, line: string) => getDialect(deviceType).errorPatterns.some((re) => re.test(line));
    expect(refuses('vendor_nxos', 'ERROR: VLAN 4094 is reserved for internal use')).toBe(true);
    expect(refuses('vendor_ios', '% 10.1.1.0 overlaps with GigabitEthernet0/1')).toBe(true);
    expect(refuses('vendor_eos', '% Unavailable command (not supported on this hardware platform)')).toBe(true);
    // A banner's own text is not a refusal.
    expect(refuses('vendor_ios', '% Authorized access only')).toBe(false);
  });

  it('IOS-like: a refused line fails with the device message; earlier lines stay (partial), the session stays usable', async () => {
    const dev = await device('vendor_ios', 'bad-ios');
    const original = dev.config();
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      const err = await s.apply([cli('ntp server 192.0.2.1\nfrobnicate the widgets\nntp server 192.0.2.2')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DriverError);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).partial).toBe(true);
      expect((err as DriverError).message).toMatch(/rejected 'frobnicate the widgets': % Invalid input detected at '\^' marker\. \(line 2 of 3\)/);
      expect(dev.config()).not.toBe(original);
      expect(dev.config()).toContain('ntp server 192.0.2.1\n');
      expect(dev.config()).not.toContain('192.0.2.2');
      // Out of configuration mode: show commands work again.
      expect(await s.run('show version')).toContain('bad-ios uptime is');

      // The first line refused: nothing was taken, not partial.
      const first = await s.apply([cli('frobnicate\nntp server 192.0.2.3')]).catch((e: unknown) => e);
      expect((first as DriverError).partial).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('commit dialect (XR-like): a refused line aborts, nothing changes; a commit makes it take effect', async () => {
    const dev = await device('vendor_xr', 'bad-xr');
    const original = dev.config();
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      const err = await s.apply([cli('ntp server 192.0.2.1\nfrobnicate the widgets')]).catch((e: unknown) => e);
      expect((err as DriverError).partial).toBe(false);
      expect((err as DriverError).message).toMatch(/% Invalid input detected .*line 2 of 2; nothing was committed/);
      expect(dev.config()).toBe(original);
      expect(dev.configLog.slice(-1)).toEqual(['abort']);
      await s.apply([cli('ntp server 192.0.2.1')]);
      expect(dev.configLog.slice(-3)).toEqual(['ntp server 192.0.2.1', 'commit', 'end']);
      expect(dev.config()).toContain('ntp server 192.0.2.1\nend\n');
    } finally {
      await s.close();
    }
  });

  it('EOS-like: restore types `configure replace <file>` without `force`, which EOS (and its simulator) refuses', async () => {
    const dev = await device('vendor_eos', 'eos-rst');
    const original = dev.config();
    const sent: string[] = [];
    const s = await sshCliDriver.open(sshTarget(dev, CREDS), {}, { write: (d, t) => d === 'sent' && sent.push(t.trim()) });
    try {
      const backup = await s.fetchConfig();
      await s.apply([cli('ntp server 192.0.2.9')]);
      expect(dev.config()).not.toBe(original);
      await s.restore(backup);
      expect(sent).toContain('configure replace flash:switchboard-restore.cfg');
      expect(dev.config()).toBe(original);
      const err = await s.run('configure replace flash:switchboard-restore.cfg force').catch((e: unknown) => e);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).message).toMatch(/rejected 'configure replace flash:switchboard-restore\.cfg force': % Invalid input$/);
      expect(await s.run('configure replace flash:switchboard-restore.cfg ignore-errors')).toBe('');
    } finally {
      await s.close();
    }
  });

  it('restore refuses a structured backup, and a dialect without a replace says so', async () => {
    const dev = await device('vendor_ios', 'fmt');
    const s = await sshCliDriver.open(sshTarget(dev, CREDS));
    try {
      await expect(s.restore({ text: '<a/>', format: 'xml', via: 'netconf' })).rejects.toThrow(/cannot restore a xml configuration over SSH CLI/);
      await expect(s.apply([{ config: '{}', config_format: 'json', operation: 'merge' }])).rejects.toThrow(/pushes cli templates only, not json/);
    } finally {
      await s.close();
    }
    const fw = await device('vendor_fw', 'fw');
    const f = await sshCliDriver.open(sshTarget(fw, CREDS));
    try {
      await expect(f.restore(await f.fetchConfig())).rejects.toThrow(/vendor_fw CLI has no configuration replace over SSH/);
    } finally {
      await f.close();
    }
  });
});
