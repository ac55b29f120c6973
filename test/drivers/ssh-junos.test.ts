/**
 * The SSH CLI driver pushing to a Junos-like device: apply() types set/delete lines after
 * `configure` and commits (`commit confirmed 5`, then `commit`), a refused line or a failed commit
 * sends `rollback 0` (nothing committed), restore() is `load override terminal` + the backup +
 * Ctrl-D + the same two commits. Checked on
 * the simulator's own running config, which its configuration mode really edits (a candidate
 * shared by all sessions, as with plain `configure`).
 */
import { describe, expect, it } from 'vitest';
import { DriverError } from '../../agent/src/drivers/types';
import { cli, edit, pushHarness } from './ssh-push';

const { device, session } = pushHarness('vendor_junos');

describe('Junos-like push over SSH', () => {
  it('apply types set/delete lines and commits: the running config changes, the prompt follows the committed host-name', async () => {
    const dev = await device('jun-apply');
    const original = dev.config();
    await session(dev, async (s) => {
      expect((await s.fetchConfig()).text).toBe(original);
      await s.apply([
        cli('set system host-name jun-apply-new\nset interfaces ge-0/0/1 description "managed by switchboard"'),
        cli('set system ntp server 192.0.2.123\ndelete protocols lldp\nset routing-options static route 192.0.2.0/24 next-hop 10.0.0.1'),
      ]);
      let expected = edit(original, /^ {4}host-name jun-apply;$/m, '    host-name jun-apply-new;');
      expected = edit(expected, /(^ {4}ge-0\/0\/1 \{\n {8}description )"[^"]*";/m, '$1"managed by switchboard";');
      expected = edit(expected, /(^ {4}ntp \{\n {8}server [^\n]+\n)/m, '$1        server 192.0.2.123;\n');
      expected = edit(expected, /^ {4}lldp \{\n {8}interface all;\n {4}\}\n/m, '');
      expected = edit(expected, /(^ {8}route 0\.0\.0\.0\/0 next-hop [^\n]+\n)/m, '$1        route 192.0.2.0/24 next-hop 10.0.0.1;\n');
      expect(expected).toContain('description "managed by switchboard";');
      expect(expected).toContain('route 192.0.2.0/24 next-hop 10.0.0.1;');
      expect(dev.config()).toBe(expected);
      // A confirmed commit, then the confirming one: a change that cut the session would be rolled back by the device.
      expect(dev.configLog.slice(-3)).toEqual(['commit confirmed 5', 'commit', 'exit configuration-mode']);
      // Left configuration mode; the session goes on under the new prompt.
      expect((await s.fetchConfig()).text).toBe(expected);
      expect(await s.run('show version')).toContain('Hostname: jun-apply-new');
    });
  });

  it('a refused line fails with the device message, nothing is committed and the shared candidate is clean again', async () => {
    const dev = await device('jun-bad');
    const original = dev.config();
    await session(dev, async (s) => {
      for (const [lines, said] of [
        [
          'set system ntp server 192.0.2.1\nset frobnicate the widgets',
          "'set frobnicate the widgets': syntax error\\. \\(line 2 of 2; nothing was committed\\)",
        ],
        ['set system ntp server 192.0.2.1\nfrobnicate', "'frobnicate': unknown command\\. \\(line 2 of 2; nothing was committed\\)"],
        ['set system host-name', "'set system host-name': missing argument\\. \\(line 1 of 1; nothing was committed\\)"],
      ]) {
        const err = await s.apply([cli(lines)]).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DriverError);
        expect((err as DriverError).kind).toBe('device');
        expect((err as DriverError).partial).toBe(false);
        expect((err as DriverError).message).toMatch(new RegExp(`^jun-bad \\(.*\\): the device rejected ${said}$`));
        expect(dev.config()).toBe(original);
        expect(dev.configLog.slice(-2)).toEqual(['rollback 0', 'exit configuration-mode']);
      }
      // A commit the device refuses: its reason in the message, nothing committed.
      const err = await s.apply([cli('set system login user bob uid 2001')]).catch((e: unknown) => e);
      expect((err as DriverError).message).toMatch(/the device rejected 'commit confirmed 5': Missing mandatory statement: 'class'$/);
      expect((err as DriverError).partial).toBe(false);
      expect(dev.config()).toBe(original);
      expect(dev.configLog.slice(-3)).toEqual(['commit confirmed 5', 'rollback 0', 'exit configuration-mode']);
      // The session is usable, and the next configure finds no uncommitted change of ours.
      expect(await s.run('show version')).toContain('Hostname: jun-bad');
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
    });
  });

  it('restore is load override: the running config is exactly the backup again, also what the change removed', async () => {
    const dev = await device('jun-restore');
    const original = dev.config();
    await session(dev, async (s) => {
      const backup = await s.fetchConfig();
      await s.apply([
        cli('set system host-name jun-other\ndelete interfaces ge-0/0/2\ndelete system ntp\nset protocols ospf area 0.0.0.0 interface ge-0/0/1.0'),
      ]);
      const changed = dev.config();
      expect(changed).not.toContain('ge-0/0/2');
      expect(changed).toContain('interface ge-0/0/1.0;');

      await s.restore(backup);
      expect(dev.config()).toBe(original);
      expect(dev.configLog.slice(-4)).toEqual(['load override terminal', 'commit confirmed 5', 'commit', 'exit configuration-mode']);
      expect((await s.fetchConfig()).text).toBe(original);
      expect(await s.run('show version')).toContain('Hostname: jun-restore');

      // A backup the device cannot read: the load's error, `rollback 0`, nothing committed.
      await s.apply([cli('set system ntp server 192.0.2.77')]);
      const before = dev.config();
      const err = await s.restore({ ...backup, text: backup.text.replace('version ', 'frobnicate 1;\nversion ') }).catch((e: unknown) => e);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).message).toMatch(/rejected the loaded configuration: terminal:1:\(0\) syntax error: frobnicate$/);
      expect(dev.config()).toBe(before);
      expect(dev.configLog.slice(-2)).toEqual(['rollback 0', 'exit configuration-mode']);
    });
  });
});

describe('a shared candidate with changes nobody committed', () => {
  it('apply refuses rather than commit them with its own and leaves them alone; restore overrides them', async () => {
    const dev = await device('jun-dirty');
    const original = dev.config();
    await session(dev, async (other) => {
      // Someone else's half-done edit (or a push cut off before its commit).
      expect(await other.run('configure')).toBe('Entering configuration mode');
      expect(await other.run('delete protocols ospf')).toBe('');
      expect(await other.run('exit configuration-mode')).toBe('Exiting configuration mode');
    });
    await session(dev, async (s) => {
      const backup = await s.fetchConfig();
      const err = await s.apply([cli('set system ntp server 192.0.2.44')]).catch((e: unknown) => e);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).partial).toBe(false);
      expect((err as DriverError).message).toMatch(/already holds changes nobody committed .*not committing them with this change/);
      expect(dev.config()).toBe(original);
      // Nothing typed: in and straight out again.
      expect(dev.configLog).toEqual(['delete protocols ospf', 'exit configuration-mode', 'exit configuration-mode']);
      // Not thrown away by us: the next configure still says so.
      expect(await s.run('configure')).toBe('Entering configuration mode\nThe configuration has been changed but not committed');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
      // A restore replaces the whole candidate, theirs included.
      await s.restore(backup);
      expect(dev.config()).toBe(original);
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
      await s.apply([cli('set system ntp server 192.0.2.44')]);
      expect(dev.config()).toContain('        server 192.0.2.44;\n');
    });
  });
});

describe('the Junos-like simulator', () => {
  it('keeps uncommitted changes in the shared candidate until commit or rollback 0, as plain configure does', async () => {
    const dev = await device('jun-cand');
    const original = dev.config();
    await session(dev, async (s) => {
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('edit interfaces ge-0/0/0')).toBe('');
      expect(await s.run('set description "edited here"')).toBe('');
      expect(await s.run('show')).toMatch(/^description "edited here";\nunit 0 \{\n/);
      expect(await s.run('top')).toBe('');
      expect(await s.run('delete system services telnet')).toBe('warning: statement not found');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
    });
    expect(dev.config()).toBe(original);
    await session(dev, async (s) => {
      // Another session sees them (and would commit them); rollback 0 throws them away.
      expect(await s.run('configure')).toBe('Entering configuration mode\nThe configuration has been changed but not committed');
      expect(await s.run('rollback 0')).toBe('load complete');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
      expect(await s.run('configure')).toBe('Entering configuration mode');
      expect(await s.run('set system ntp server 192.0.2.5')).toBe('');
      expect(await s.run('commit check')).toBe('configuration check succeeds');
      expect(dev.config()).toBe(original);
      expect(await s.run('commit')).toBe('commit complete');
      expect(dev.config()).toContain('        server 192.0.2.5;\n');
      // rollback 1: the config before that commit, into the candidate.
      expect(await s.run('rollback 1')).toBe('load complete');
      expect(await s.run('commit')).toBe('commit complete');
      expect(await s.run('exit configuration-mode')).toBe('Exiting configuration mode');
    });
    expect(dev.config()).toBe(original);
  });
});
