/**
 * The SSH CLI driver pushing to a FortiOS-like firewall. FortiOS has no configuration mode: the
 * template is typed at the top-level prompt and carries its own `config …` / `edit …` blocks, which
 * `next` and `end` save. A refused line is followed by `abort` until the top-level prompt returns,
 * which discards the open blocks (an `end` would save the half-typed object); what `next` or `end`
 * saved before it stays, and only then is the failure partial. Checked on the simulator's own
 * running config, which its blocks really edit.
 */
import { describe, expect, it } from 'vitest';
import type { SshCliSessionApi } from '../../agent/src/drivers/ssh';
import { DriverError, type ConfigChange } from '../../agent/src/drivers/types';
import type { SimSshDevice } from '../sim/ssh';
import { cli, edit, pushHarness } from './ssh-push';

const { device, session } = pushHarness('vendor_fw');

/** The DriverError `apply` fails with. */
async function refused(s: SshCliSessionApi, ...changes: ConfigChange[]): Promise<DriverError> {
  const err = await s.apply(changes).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DriverError);
  expect((err as DriverError).kind).toBe('device');
  return err as DriverError;
}

/** The lines the device saw from the push on (its log also holds the pager-off block of the login). */
const typedSince = (dev: SimSshDevice, from: number) => dev.configLog.slice(from);

describe('FortiOS-like push over SSH', () => {
  it('a refused line in an open block: abort discards the half-typed object, nothing is saved, the session goes on', async () => {
    const dev = await device('fw-refused');
    const original = dev.config();
    await session(dev, async (s) => {
      const from = dev.configLog.length;
      const template = [
        'config system interface',
        '    edit "port1"',
        '        set mode static',
        '        set ip 10.0.0.300 255.255.255.0',
        '    next',
        'end',
      ];
      const err = await refused(s, cli(...template));
      expect(err.partial).toBe(false);
      expect(err.message).toMatch(
        /rejected ' *set ip 10\.0\.0\.300 255\.255\.255\.0': value parse error before '10\.0\.0\.300' \(line 4 of 6; nothing was saved\)$/,
      );
      // Typed where it stood (no `config system global` around it), then `abort`, never `end`.
      expect(typedSince(dev, from)).toEqual([...template.slice(0, 4).map((l) => l.trim()), 'abort']);
      expect(dev.config()).toBe(original);
      expect((await s.fetchConfig()).text).toBe(original);
      expect(await s.run('get system status')).toContain('Hostname: fw-refused');
    });
  });

  it('nested blocks take one abort per level until the top-level prompt returns', async () => {
    const dev = await device('fw-nested');
    const original = dev.config();
    await session(dev, async (s) => {
      const from = dev.configLog.length;
      const template = ['config system interface', 'edit "port2"', 'set alias "lan"', 'config ipv6', 'set ip6-address 2001:db8::1/64', 'frobnicate'];
      const err = await refused(s, cli(...template, 'end', 'next', 'end'));
      expect(err.partial).toBe(false);
      expect(err.message).toMatch(/rejected 'frobnicate': command parse error before 'frobnicate' \(line 6 of 9; nothing was saved\)$/);
      // One abort leaves `config ipv6` (back at `fw-nested (port2) #`), the next the entry and its table.
      expect(typedSince(dev, from)).toEqual([...template, 'abort', 'abort']);
      expect(dev.config()).toBe(original);
      expect((await s.fetchConfig()).text).toBe(original);
    });
  });

  it('what next or end saved before the refused line stays: the failure is partial (FortiOS pushes are not transactional)', async () => {
    const dev = await device('fw-partial');
    const original = dev.config();
    await session(dev, async (s) => {
      const err = await refused(
        s,
        cli('config system global', 'set timezone 12', 'end'),
        cli(
          'config system interface',
          'edit "port1"',
          'set alias "wan"',
          'next',
          'edit "port2"',
          'set alias "lan"',
          'set ip 10.2.0.1/33',
          'next',
          'end',
        ),
      );
      expect(err.partial).toBe(true);
      expect(err.message).toMatch(/value parse error before '10\.2\.0\.1\/33' \(line 10 of 12\)$/);
      let expected = edit(original, /^ {4}set timezone 04$/m, '    set timezone 12');
      expected = edit(expected, /^ {8}set alias "[^"]*-1"$/m, '        set alias "wan"');
      expect(dev.config()).toBe(expected); // port2's alias was in the aborted entry
      expect((await s.fetchConfig()).text).toBe(expected);
    });
  });

  it('a good template over several tables applies at the top-level prompt; new entries are added', async () => {
    const dev = await device('fw-good');
    const original = dev.config();
    await session(dev, async (s) => {
      const from = dev.configLog.length;
      const lines = [
        'config system global',
        '    set timezone 12',
        'end',
        'config system interface',
        '    edit "port1"',
        '        set alias "wan"',
        '        set ip 192.0.2.1 255.255.255.0',
        '    next',
        '    edit "port9"',
        '        set ip 198.51.100.1/24',
        '    next',
        'end',
        'config router static',
        '    edit 2',
        '        set gateway 192.0.2.254',
        '        set device "port1"',
        '    next',
        'end',
      ];
      await s.apply([cli(...lines.slice(0, 3)), cli(...lines.slice(3))]);
      expect(typedSince(dev, from)).toEqual(lines.map((l) => l.trim()));
      let expected = edit(original, /^ {4}set timezone 04$/m, '    set timezone 12');
      expected = edit(expected, /^( {8})set ip 10\.1\.\d+\.1 255\.255\.255\.0$/m, '$1set ip 192.0.2.1 255.255.255.0');
      expected = edit(expected, /^ {8}set alias "[^"]*-1"$/m, '        set alias "wan"');
      expected = edit(expected, /( {8}set alias "[^"]*-3"\n {4}next\n)/, '$1    edit "port9"\n        set ip 198.51.100.1/24\n    next\n');
      expected = edit(
        expected,
        /( {8}set device "port1"\n {4}next\n)/,
        '$1    edit 2\n        set gateway 192.0.2.254\n        set device "port1"\n    next\n',
      );
      expect(dev.config()).toBe(expected);
      expect((await s.fetchConfig()).text).toBe(expected);
    });
  });

  it('a template that leaves its block open is saved with end; a refused first line at the top level changes nothing', async () => {
    const dev = await device('fw-open');
    const original = dev.config();
    await session(dev, async (s) => {
      await s.apply([cli('config system global', 'set timezone 12')]);
      const expected = edit(original, /^ {4}set timezone 04$/m, '    set timezone 12');
      expect(dev.config()).toBe(expected);
      expect(dev.configLog.slice(-1)).toEqual(['end']);

      const from = dev.configLog.length;
      const err = await refused(s, cli('confg system global', 'set timezone 01', 'end'));
      expect(err.partial).toBe(false);
      expect(err.message).toMatch(/command parse error before 'confg' \(line 1 of 3; nothing was saved\)$/);
      expect(typedSince(dev, from)).toEqual([]); // refused at the top-level prompt: no block opened, nothing to abort
      expect(dev.config()).toBe(expected);
    });
  });

  it('a template that renames the firewall is applied: the prompt is learned again when its block is saved', async () => {
    const dev = await device('fw-rename');
    await session(dev, async (s) => {
      await s.apply([cli('config system global', 'set hostname "fw-edge-2"', 'end')]);
      // The session goes on at the new prompt (`fw-edge-2 # `): a read and a second push.
      expect((await s.fetchConfig()).text).toMatch(/^ {4}set hostname "fw-edge-2"$/m);
      await s.apply([cli('config system global', 'set timezone 12', 'end')]);
      expect(dev.config()).toMatch(/^ {4}set timezone 12$/m);
    });
  });
});
