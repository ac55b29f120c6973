/**
 * The SSH CLI driver pushing to a PAN-OS-like firewall, whose candidate configuration all
 * administrators share: the push commits and reverts only the changes of the account it logs in
 * with (`commit partial admin <user>`, `revert config partial admin <user>`), so another
 * administrator's pending change survives a push that succeeds and one that fails. Checked on the
 * simulator's PAN-OS-like configuration mode, which keeps who made each pending change.
 */
import { describe, expect, it } from 'vitest';
import { DriverError } from '../../agent/src/drivers/types';
import { cli, pushHarness } from './ssh-push';

const { device, session } = pushHarness('vendor_panos');
const ALICE = { username: 'alice', password: 'alice-pass' };

const ALICE_LINE = 'set address alice-net ip-netmask 198.51.100.0/24';
const OURS = 'set address web-1 ip-netmask 192.0.2.10/32';

describe('PAN-OS-like push over SSH, on a candidate shared with other administrators', () => {
  it("commits only our changes: another administrator's pending change stays pending, after a push and after a failed one", async () => {
    const dev = await device('pa-shared', { users: { alice: ALICE.password } });
    const original = dev.config();
    // Alice edits in the candidate and leaves without committing (as from the web interface).
    await session(
      dev,
      async (alice) => {
        expect(await alice.run('configure')).toBe('Entering configuration mode');
        expect(await alice.run(ALICE_LINE)).toBe('');
        expect(await alice.run('exit')).toBe('');
      },
      ALICE,
    );

    await session(dev, async (s) => {
      await s.apply([cli(OURS)]);
      expect(dev.config()).toBe(`${original}${OURS}\n`);
      // Ours only, from both ends: what this account left is discarded first, then ours is committed.
      expect(dev.configLog.slice(-4)).toEqual(['revert config partial admin admin', OURS, 'commit partial admin admin', 'exit']);

      // A refused line: our lines are reverted, hers are not.
      const err = await s.apply([cli('set address web-2 ip-netmask 192.0.2.11/32', 'set frobnicate the widgets')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DriverError);
      expect((err as DriverError).kind).toBe('device');
      expect((err as DriverError).partial).toBe(false);
      expect((err as DriverError).message).toMatch(/rejected 'set frobnicate the widgets': Invalid syntax\. \(line 2 of 2; nothing was committed\)$/);
      expect(dev.configLog.slice(-2)).toEqual(['revert config partial admin admin', 'exit']);
      expect(dev.config()).toBe(`${original}${OURS}\n`);
    });

    // Her change is still there, hers to commit; ours of the failed push is not.
    await session(
      dev,
      async (alice) => {
        await alice.run('configure');
        expect(await alice.run('check pending-changes')).toBe('yes');
        expect(await alice.run('commit')).toMatch(/Configuration committed successfully$/);
        expect(await alice.run('check pending-changes')).toBe('no');
        await alice.run('exit');
      },
      ALICE,
    );
    expect(dev.config()).toBe(`${original}${OURS}\n${ALICE_LINE}\n`);
  });

  it('discards what its own account left uncommitted (a push cut off before its commit) rather than commit it with the next push', async () => {
    const dev = await device('pa-stale', { users: { alice: ALICE.password } });
    const original = dev.config();
    await session(dev, async (s) => {
      // A push whose session died after a line, before its commit or revert.
      await s.run('configure');
      await s.run('set address stale ip-netmask 203.0.113.1/32');
      await s.run('exit');
    });
    await session(dev, (alice) => alice.run('configure').then(() => alice.run(ALICE_LINE)), ALICE);
    await session(dev, (s) => s.apply([cli(OURS)]));
    expect(dev.config()).toBe(`${original}${OURS}\n`);
    await session(
      dev,
      async (alice) => {
        await alice.run('configure');
        // Only hers is left: a plain commit (every administrator's changes) adds hers alone.
        expect(await alice.run('commit')).toMatch(/committed successfully$/);
      },
      ALICE,
    );
    expect(dev.config()).toBe(`${original}${OURS}\n${ALICE_LINE}\n`);
  });

  it("the simulator's plain commit and revert take every administrator's changes, the partial ones one administrator's", async () => {
    const dev = await device('pa-sim', { users: { alice: ALICE.password } });
    const original = dev.config();
    await session(dev, (alice) => alice.run('configure').then(() => alice.run(ALICE_LINE)), ALICE);
    await session(dev, async (s) => {
      await s.run('configure');
      await s.run(OURS);
      expect(await s.run('commit partial admin alice')).toMatch(/committed successfully$/);
      expect(dev.config()).toBe(`${original}${ALICE_LINE}\n`);
      await s.run('delete address alice-net');
      expect(await s.run('revert config')).toBe('Candidate configuration reverted');
      expect(await s.run('check pending-changes')).toBe('no');
      expect(await s.run('commit')).toBe('There are no changes to commit.');
      await s.run('exit');
    });
    expect(dev.config()).toBe(`${original}${ALICE_LINE}\n`);
  });
});
