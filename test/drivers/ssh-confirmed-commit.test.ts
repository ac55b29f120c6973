/**
 * Confirmed commits over SSH CLI (Junos-like `commit confirmed 5`, XR-like `commit confirmed 300`
 * and `commit replace confirmed 300`, each followed by the confirming `commit`): a push or restore
 * that goes through stays; one whose session dies before the confirmation fails as partial, says
 * that the device rolls the change back by itself, and the simulator does so when the window
 * passes. The simulator's rollback timer runs at CONFIRMED_COMMIT_WINDOW_S × SCALE_MS (about a
 * second); real SSH sessions throughout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { sshCliDriver, type SshCliSessionApi } from '../../agent/src/drivers/ssh';
import { CONFIRMED_COMMIT_WINDOW_S, registerDialect, getDialect } from '../../agent/src/drivers/ssh/dialects';
import { DriverError, type ConfigChange, type DeviceTarget, type SessionLimits } from '../../agent/src/drivers/types';
import { sshTarget, startSshDevice, type SimSshDevice, type SshDeviceOptions } from '../sim/ssh';

const CREDS = { username: 'admin', password: 'sim-pass' };
const SCALE_MS = 3;
/** The simulator's rollback window, and a wait that is surely past it. */
const WINDOW_MS = CONFIRMED_COMMIT_WINDOW_S * SCALE_MS;
const PAST_WINDOW_MS = WINDOW_MS + 600;
/** Short commit limits: a confirming commit that hangs fails in well under the window. */
const LIMITS: Partial<SessionLimits> = { connectTimeoutMs: 5000, commandTimeoutMs: 300, idleTimeoutMs: 300, commitTimeoutMs: 300 };

const started: SimSshDevice[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
});

async function device(dialect: string, hostname: string, more: SshDeviceOptions = {}): Promise<SimSshDevice> {
  const dev = await startSshDevice({ dialect, hostname, ...CREDS, configScale: 3, confirmedCommitScaleMs: SCALE_MS, ...more });
  started.push(dev);
  return dev;
}

const cli = (config: string): ConfigChange => ({ config, config_format: 'cli', operation: 'merge', target_path: null });

async function withSession<T>(target: DeviceTarget, fn: (s: SshCliSessionApi) => Promise<T>): Promise<T> {
  const s = await sshCliDriver.open(target, LIMITS);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** Waits (a guard, not a timed assertion) until the simulator has rolled back `n` confirmed commits. */
async function rolledBack(dev: SimSshDevice, n: number): Promise<void> {
  for (const until = Date.now() + 10_000; dev.confirmedCommit.rolledBack < n; await sleep(25)) {
    if (Date.now() > until) throw new Error(`no rollback by the simulator after 10 s (window ${WINDOW_MS} ms)`);
  }
}

const CASES = [
  {
    dialect: 'vendor_junos',
    line: 'set system ntp server 192.0.2.77',
    shows: '        server 192.0.2.77;\n',
    trial: 'commit confirmed 5',
    window: '5 minutes',
  },
  { dialect: 'vendor_xr', line: 'ntp server 192.0.2.77', shows: 'ntp server 192.0.2.77\n', trial: 'commit confirmed 300', window: '300 seconds' },
];

describe('a push is a confirmed commit and its confirmation', () => {
  for (const c of CASES) {
    const rollsBack = `the device rolls it back by itself ${c.window} after '${c.trial}' unless confirmed`;

    it(`${c.dialect}: types '${c.trial}' then 'commit'; the change stays after the window`, async () => {
      const dev = await device(c.dialect, `cc-ok-${c.dialect.slice(7)}`);
      await withSession(sshTarget(dev, CREDS), (s) => s.apply([cli(c.line)]));
      expect(dev.configLog).toEqual([c.line, c.trial, 'commit', c.dialect === 'vendor_junos' ? 'exit configuration-mode' : 'end']);
      expect(dev.config()).toContain(c.shows);
      expect(dev.confirmedCommit.pending).toBe(false);
      await sleep(PAST_WINDOW_MS);
      expect(dev.config()).toContain(c.shows);
      expect(dev.confirmedCommit.rolledBack).toBe(0);
    });

    it(`${c.dialect}: the session dies as the confirmed commit takes effect: partial, and the device rolls back by itself`, async () => {
      const dev = await device(c.dialect, `cc-cut-${c.dialect.slice(7)}`, { faults: { dropOnConfirmedCommit: true } });
      const original = dev.config();
      const err = (await withSession(sshTarget(dev, CREDS), (s) => s.apply([cli(c.line)])).catch((e: unknown) => e)) as DriverError;
      expect(err).toBeInstanceOf(DriverError);
      expect(err.kind).not.toBe('device');
      expect(err.partial).toBe(true);
      expect(err.message).toContain(`during '${c.trial}': the change may have been committed; if so, ${rollsBack}`);
      // It went in, and nothing confirmed it.
      expect(dev.config()).toContain(c.shows);
      expect(dev.confirmedCommit.pending).toBe(true);
      await rolledBack(dev, 1);
      expect(dev.config()).toBe(original);
    });

    it(`${c.dialect}: the confirming commit never answers: partial, saying so; the device rolls back by itself`, async () => {
      // The line and the confirmed commit are taken, then the shell hangs.
      const dev = await device(c.dialect, `cc-hang-${c.dialect.slice(7)}`, { faults: { stallConfigAfter: 2 } });
      const original = dev.config();
      const err = (await withSession(sshTarget(dev, CREDS), (s) => s.apply([cli(c.line)])).catch((e: unknown) => e)) as DriverError;
      expect(err.kind).toBe('timeout');
      expect(err.partial).toBe(true);
      expect(err.message).toContain(
        `during 'commit', the confirming commit, which may not have reached it: the change is in effect, and ${rollsBack}`,
      );
      expect(dev.config()).toContain(c.shows);
      await rolledBack(dev, 1);
      expect(dev.config()).toBe(original);
    });
  }

  it('a confirming commit the device refuses: a partial device error that says the change rolls back by itself', async () => {
    // A dialect whose confirmation the device cannot parse stands for a device refusing it.
    const junos = getDialect('vendor_junos');
    registerDialect('test_junos_bad_confirm', {
      ...junos,
      configMode: { ...junos.configMode, confirmedCommit: { ...junos.configMode.confirmedCommit!, confirm: 'commit frobnicate' } },
    });
    const dev = await device('vendor_junos', 'cc-refused');
    const original = dev.config();
    const target = sshTarget(dev, CREDS, { device_type: 'test_junos_bad_confirm' });
    const err = (await withSession(target, (s) => s.apply([cli(CASES[0].line)])).catch((e: unknown) => e)) as DriverError;
    expect(err.kind).toBe('device');
    expect(err.partial).toBe(true);
    expect(err.message).toMatch(/the device rejected 'commit frobnicate': syntax error\. \(the confirming commit failed: the change is in effect, /);
    expect(err.message).toMatch(/and the device rolls it back by itself 5 minutes after 'commit confirmed 5' unless confirmed\)$/);
    // Out of configuration mode the usual way (rollback 0 discards the candidate, not the confirmed commit).
    expect(dev.configLog.slice(-2)).toEqual(['rollback 0', 'exit configuration-mode']);
    await rolledBack(dev, 1);
    expect(dev.config()).toBe(original);
  });
});

describe('a restore is confirmed too', () => {
  it('Junos-like: load override, `commit confirmed 5`, `commit`; the backup stays after the window', async () => {
    const dev = await device('vendor_junos', 'cc-restore');
    const original = dev.config();
    await withSession(sshTarget(dev, CREDS), async (s) => {
      const backup = await s.fetchConfig();
      await s.apply([cli('delete system ntp')]);
      const typed = dev.configLog.length;
      await s.restore(backup);
      expect(dev.configLog.slice(typed)).toEqual(['load override terminal', 'commit confirmed 5', 'commit', 'exit configuration-mode']);
    });
    await sleep(PAST_WINDOW_MS);
    expect(dev.config()).toBe(original);
    expect(dev.confirmedCommit.rolledBack).toBe(0);
  });

  it('XR-like: a `commit replace confirmed 300` whose session dies is rolled back to the config before the restore', async () => {
    const dev = await device('vendor_xr', 'cc-xr-restore');
    const target = sshTarget(dev, CREDS);
    const backup = await withSession(target, async (s) => {
      const b = await s.fetchConfig();
      await s.apply([cli('ntp server 192.0.2.88')]);
      return b;
    });
    const changed = dev.config();
    dev.setFaults({ dropOnConfirmedCommit: true });
    const err = (await withSession(target, (s) => s.restore(backup)).catch((e: unknown) => e)) as DriverError;
    expect(err.partial).toBe(true);
    const trial = 'commit replace confirmed 300';
    expect(err.message).toContain(
      `during '${trial}': the change may have been committed; if so, the device rolls it back by itself 300 seconds after '${trial}' unless confirmed`,
    );
    expect(dev.config()).toBe(backup.text);
    await rolledBack(dev, 1);
    expect(dev.config()).toBe(changed);
  });
});

describe('the simulator', () => {
  it('Junos-like: says when a confirmed commit rolls back; a commit from another session confirms it', async () => {
    const dev = await device('vendor_junos', 'cc-sim-junos');
    const target = sshTarget(dev, CREDS);
    await withSession(target, async (s) => {
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('set system ntp server 192.0.2.99')).toBe('');
      expect(await s.run('commit confirmed 5')).toBe(
        'commit confirmed will be automatically rolled back in 5 minutes unless confirmed\ncommit complete',
      );
      await expect(s.run('commit confirmed 0')).rejects.toThrow(/syntax error\.$/);
    });
    expect(dev.confirmedCommit.pending).toBe(true);
    await withSession(target, async (s) => {
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('commit')).toBe('commit complete');
    });
    expect(dev.confirmedCommit.pending).toBe(false);
    await sleep(PAST_WINDOW_MS);
    expect(dev.config()).toContain('        server 192.0.2.99;\n');
  });

  it('XR-like: takes seconds (30 to 65535) or `minutes N`, and refuses other times', async () => {
    const dev = await device('vendor_xr', 'cc-sim-xr');
    await withSession(sshTarget(dev, CREDS), async (s) => {
      await s.run('configure terminal');
      for (const bad of ['commit confirmed 10', 'commit confirmed 70000', 'commit confirmed minutes 0']) {
        await expect(s.run(bad)).rejects.toThrow(/% Invalid input/);
      }
      expect(await s.run('ntp server 192.0.2.98')).toBe('');
      expect(await s.run('commit confirmed minutes 1')).toBe('');
      expect(dev.confirmedCommit.pending).toBe(true);
      expect(await s.run('commit')).toBe('');
      expect(dev.confirmedCommit.pending).toBe(false);
      expect(await s.run('end')).toBe('');
    });
    expect(dev.config()).toContain('ntp server 192.0.2.98\n');
  });

  it("XR-like: while a session's trial is pending, another session's push fails saying why, and the trial rolls back", async () => {
    // XR lets only the session that armed a confirmed commit confirm it: a push over another
    // session must not take the refusal for a commit.
    const dev = await device('vendor_xr', 'cc-sim-xr-other');
    const original = dev.config();
    const target = sshTarget(dev, CREDS);
    await withSession(target, async (s) => {
      await s.run('configure terminal');
      await s.run('ntp server 192.0.2.97');
      await s.run('commit confirmed 30');
      expect(dev.confirmedCommit.pending).toBe(true);
      await withSession(target, async (other) => {
        const err = (await other.apply([cli('ntp server 192.0.2.96')]).catch((e: unknown) => e)) as DriverError;
        expect(err.kind).toBe('device');
        expect(err.message).toMatch(/% Cannot commit because there is an unexpired trial\/rollback session/);
      });
      await s.run('abort').catch(() => undefined);
    });
    await sleep(30 * SCALE_MS + 500);
    expect(dev.config()).toBe(original);
  });
});
