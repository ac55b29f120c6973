/**
 * The SSH CLI driver changing configurations against the simulator: apply() in configuration
 * mode per dialect (enter, lines, error markers, commit, leave) and restore() with replace
 * semantics (SCP + configure replace, or SCP + load + commit replace), checked on the simulator's
 * own config; and configurations cut short, refused both as a pull and as a backup to put back.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { sshCliDriver, type SshCliSessionApi } from '../../agent/src/drivers/ssh';
import { getDialect } from '../../agent/src/drivers/ssh/dialects';
import { DriverError, type ConfigChange } from '../../agent/src/drivers/types';
import { sshTarget, startSshDevice, type SimSshDevice, type SshDeviceOptions } from '../sim/ssh';

const CREDS = { username: 'admin', password: 'sim-pass', enable_password: 'sim-enable' };
const DEVICE = { username: 'admin', password: 'sim-pass', enablePassword: 'sim-enable', configScale: 4 };

const started: SimSshDevice[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
});

async function device(dialect: string, hostname: string, more: SshDeviceOptions = {}): Promise<SimSshDevice> {
  const dev = await startSshDevice({ ...DEVICE, dialect, hostname, ...more });
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
    // A PAN-OS commit whose validation failed ends so (after the reasons, which have no common form).
    expect(refuses('vendor_panos', 'Commit failed')).toBe(true);
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
      // A confirmed commit, then the confirming one: a change that cut the session would be rolled back by the device.
      expect(dev.configLog.slice(-4)).toEqual(['ntp server 192.0.2.1', 'commit confirmed 300', 'commit', 'end']);
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

/** A session to `dev` for `fn`, always closed. */
async function withSession<T>(dev: SimSshDevice, fn: (s: SshCliSessionApi) => Promise<T>): Promise<T> {
  const s = await sshCliDriver.open(sshTarget(dev, CREDS));
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

describe('commits and replaces the device works on in silence', () => {
  // Cut off at the command or idle limit, a commit still running on the device would be reported
  // failed and a restore pushed over it: they wait up to the commit limit instead.
  const LIMITS = { connectTimeoutMs: 5000, commandTimeoutMs: 300, idleTimeoutMs: 200, commitTimeoutMs: 5000 };

  it('a Junos commit and an IOS configure replace silent past the command and idle limits succeed', async () => {
    const junos = await device('vendor_junos', 'slow-commit', { faults: { slowLine: { match: /^commit\b/, ms: 800 } } });
    const s = await sshCliDriver.open(sshTarget(junos, CREDS), LIMITS);
    try {
      await s.apply([cli('set system ntp server 192.0.2.44')]);
      expect(junos.config()).toContain('192.0.2.44');
    } finally {
      await s.close();
    }
    const ios = await device('vendor_ios', 'slow-replace', { faults: { slowLine: { match: /^configure replace /, ms: 800 } } });
    const r = await sshCliDriver.open(sshTarget(ios, CREDS), LIMITS);
    try {
      const backup = await r.fetchConfig();
      await r.apply([cli('ntp server 192.0.2.45')]);
      await r.restore(backup);
      expect((await r.fetchConfig()).text).toBe(backup.text);
    } finally {
      await r.close();
    }
  });

  it('past the commit limit, the commit fails as a timeout that may have gone in', async () => {
    const junos = await device('vendor_junos', 'too-slow', { faults: { slowLine: { match: /^commit\b/, ms: 1500 } } });
    const s = await sshCliDriver.open(sshTarget(junos, CREDS), { ...LIMITS, commitTimeoutMs: 400 });
    try {
      const err = (await s.apply([cli('set system ntp server 192.0.2.46')]).catch((e: unknown) => e)) as DriverError;
      expect(err.kind).toBe('timeout');
      expect(err.partial).toBe(true);
      expect(err.message).toMatch(/command timeout 400 ms/);
    } finally {
      await s.close();
    }
  });
});

const XR_FILE = 'harddisk:/switchboard-restore.cfg';

describe('XR-like restore: the backup copied over SCP and loaded, never typed', () => {
  it('a `?` and a tab in a description come back exactly; only load, the confirmed commit replace, its confirmation and end are typed', async () => {
    const dev = await device('vendor_xr', 'xr-help');
    dev.setConfig(dev.config().replace(/^ description \S+$/m, ' description what? now\there'));
    const original = dev.config();
    expect(original).toContain(' description what? now\there\n');
    await withSession(dev, async (s) => {
      const backup = await s.fetchConfig();
      expect(backup.text).toBe(original);
      await s.apply([cli('interface GigabitEthernet0/0/0/0\n description changed\nexit\nntp server 192.0.2.5')]);
      expect(dev.config()).not.toBe(original);
      const typed = dev.configLog.length;

      await s.restore(backup);
      expect(dev.config()).toBe(original);
      expect(dev.files.get(XR_FILE)).toBe(backup.text);
      expect(dev.configLog.slice(typed)).toEqual([`load ${XR_FILE}`, 'commit replace confirmed 300', 'commit', 'end']);
      expect((await s.fetchConfig()).text).toBe(original);
    });
  });

  it('a pushed line holding a `?` or a tab is refused before anything is typed: the CLI would take them as keys, not text', async () => {
    // The simulator, like the CLI, prints help for a typed `?` and completes a word on a tab: typed,
    // `description what? now<TAB>here` became `description what nowhere`, silently.
    for (const dialect of ['vendor_xr', 'vendor_ios', 'vendor_junos']) {
      const dev = await device(dialect, `typed-${dialect}`);
      const before = dev.config();
      await withSession(dev, async (s) => {
        for (const [line, key] of [
          [' description what? now', /holds a '\?', which the CLI takes as a request for help/],
          [' description now\there', /holds a tab, which the CLI takes as word completion/],
        ] as const) {
          const err = (await s.apply([cli(`interface GigabitEthernet0/0/0/1\n${line}\nexit`)]).catch((e: unknown) => e)) as DriverError;
          expect(err.kind).toBe('device');
          expect(err.partial).toBe(false);
          expect(err.message).toMatch(key);
          expect(err.message).toMatch(/line 2 of 3 .*the device would get the line without it; nothing was typed$/);
        }
      });
      expect(dev.configLog).toEqual([]);
      expect(dev.config()).toBe(before);
    }
    // A tab that indents a line is layout, typed as a space.
    const ios = await device('vendor_ios', 'typed-indent');
    await withSession(ios, (s) => s.apply([cli('interface GigabitEthernet0/1\n\tdescription indented\nexit')]));
    expect(ios.configLog).toContain('description indented');
    expect(ios.config()).toContain(' description indented');
  });

  it("a backup the device cannot load: the load's error, `abort`, nothing changed", async () => {
    const dev = await device('vendor_xr', 'xr-badload');
    const original = dev.config();
    await withSession(dev, async (s) => {
      const backup = await s.fetchConfig();
      const err = await s.restore({ ...backup, text: backup.text.replace(/^end$/m, 'frobnicate the widgets\nend') }).catch((e: unknown) => e);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).message).toMatch(
        new RegExp(`rejected 'load ${XR_FILE}': Syntax/Authorization errors in one or more commands\\.!! CONFIGURATION FAILED`),
      );
      expect(dev.configLog.slice(-2)).toEqual([`load ${XR_FILE}`, 'abort']);
      expect(dev.config()).toBe(original);
      expect(await s.run('show version')).toContain('xr-badload uptime is');
    });
  });
});

describe('XR-like restore: nothing is committed unless the load read the backup', () => {
  it('a copy that is not where the load reads it: the load says so, `abort`, the router keeps its config', async () => {
    const dev = await device('vendor_xr', 'xr-lost', { faults: { loseUploads: true } });
    const original = dev.config();
    await withSession(dev, async (s) => {
      const backup = await s.fetchConfig();
      const err = (await s.restore(backup).catch((e: unknown) => e)) as DriverError;
      expect(err.kind).toBe('device');
      expect(err.message).toMatch(new RegExp(`rejected 'load ${XR_FILE}': Couldn't open file ${XR_FILE}`));
      expect(dev.configLog.slice(-2)).toEqual([`load ${XR_FILE}`, 'abort']);
      expect(dev.config()).toBe(original);
    });
  });

  it('a load that prints no "bytes parsed" line is not followed by a commit replace', async () => {
    // The device answers the load with nothing: the candidate is empty, and `commit replace` would wipe the router.
    const dev = await device('vendor_xr', 'xr-silent-load', { faults: { silentLoad: true } });
    const original = dev.config();
    await withSession(dev, async (s) => {
      const err = (await s.restore(await s.fetchConfig()).catch((e: unknown) => e)) as DriverError;
      expect(err.kind).toBe('device');
      expect(err.message).toMatch(/did not say it read the backup \(no output\); not committing a replace of the whole configuration/);
      expect(dev.configLog.slice(-2)).toEqual([`load ${XR_FILE}`, 'abort']);
      expect(dev.config()).toBe(original);
    });
  });
});

describe('a configuration cut short', () => {
  const CUT: Record<string, RegExp> = {
    vendor_ios: /it does not end with the line 'end' that ends every complete one/,
    vendor_eos: /it does not end with the line 'end' that ends every complete one/,
    vendor_xr: /it does not end with the line 'end' that ends every complete one/,
    vendor_junos: /\d block\(s\) are still open at its end|its last statement ends without '\}' or ';'/,
  };
  for (const [dialect, why] of Object.entries(CUT)) {
    it(`${dialect}: a pull whose output stopped half-way, prompt and all, fails rather than become a backup`, async () => {
      const dev = await device(dialect, `cut-${dialect.slice(7)}`, { configScale: 8, faults: { cutOutput: true } });
      await withSession(dev, async (s) => {
        const err = await s.fetchConfig().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DriverError);
        expect((err as DriverError).kind).toBe('device');
        expect((err as DriverError).message).toMatch(
          new RegExp(`the configuration '.+' returned looks cut short: (${why.source}); not taken as a backup$`),
        );
        // Not a broken session: the device answered, only not all of it.
        expect(await s.run('show version')).toBeTruthy();
      });
    });
  }

  for (const dialect of ['vendor_ios', 'vendor_xr', 'vendor_junos']) {
    it(`${dialect}: restore refuses a backup cut short before it copies, types or changes anything`, async () => {
      const dev = await device(dialect, `half-${dialect.slice(7)}`);
      const original = dev.config();
      await withSession(dev, async (s) => {
        const backup = await s.fetchConfig();
        const lines = backup.text.split('\n');
        const half = { ...backup, text: lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n' };
        const logged = dev.configLog.length;
        const err = await s.restore(half).catch((e: unknown) => e);
        expect((err as DriverError).kind).toBe('device');
        expect((err as DriverError).message).toMatch(
          new RegExp(
            `: the backup looks truncated \\((${CUT[dialect].source})\\); nothing was changed: ` +
              'replacing the configuration with it would remove everything after the cut$',
          ),
        );
        expect(dev.files.size).toBe(0);
        expect(dev.configLog.length).toBe(logged);
        expect(dev.config()).toBe(original);
        // The whole backup is put back as ever.
        await s.restore(backup);
        expect(dev.config()).toBe(original);
      });
    });
  }

  it('Junos-like: braces in quoted strings, comments and annotations do not count; a text cut inside a block or a line does', () => {
    const check = getDialect('vendor_junos').truncated!;
    expect(check(['system {', '    host-name "a { b";', '    /* note } */', '    login { # a comment {', '    }', '}'])).toBeUndefined();
    expect(check(['/* a', '   } */', 'version 1;'])).toBeUndefined();
    // `/*` and `#` inside a word are not comments.
    expect(check(['groups {', '    interface ge-0/0/* {', '        description a#b;', '    }', '}'])).toBeUndefined();
    expect(check(['system {', '    host-name r1;'])).toBe('1 block(s) are still open at its end');
    expect(check(['system {', '}', 'protocols'])).toBe("its last statement ends without '}' or ';'");
    expect(check(['}'])).toBe("a '}' closes a block that was never opened");
  });

  it('IOS-like dialects need the final `end`; NX-OS, whose show running-config has no end mark, and generic CLIs are not checked', () => {
    expect(getDialect('vendor_xe').truncated!(['hostname r1', 'end'])).toBeUndefined();
    expect(getDialect('vendor_xe').truncated!(['hostname r1', 'interface Gi1'])).toMatch(/does not end with the line 'end'/);
    // An ASA, often added as vendor_ios, ends its running config with `: end`.
    expect(getDialect('vendor_ios').truncated!(['hostname asa1', ': end', ''])).toBeUndefined();
    for (const t of ['vendor_nxos', 'generic', 'custom', 'vendor_panos', 'vendor_fw']) expect(getDialect(t).truncated, t).toBeUndefined();
  });
});
