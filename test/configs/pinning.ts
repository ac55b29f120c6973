/**
 * What the trust-on-first-use suites (SSH host keys, gNMI certificates) share: a controller with
 * quick sweeps, an org admin whose in-process agent runs the jobs, another organization, config
 * pulls through the API and reads of a device's pin from its full form.
 */
import { expect } from 'vitest';
import { enrollAgent, startAgent } from '../agents/helpers';
import { startTestController } from '../helpers/controller';
import { inventoryUser } from '../inventory/helpers';

export async function pinningFixture() {
  const c = await startTestController({ config: { jobs: { sweepIntervalMs: 200 } } });
  const u = await inventoryUser(c, ['org_admin']);
  // An administrator of another organization: org scoping answers 404 even to a caller who may clear pins.
  const other = await inventoryUser(c, ['org_admin']);
  const { identity } = await enrollAgent(c, u);
  const agent = await startAgent(c, identity);
  return {
    c,
    u,
    other,
    pull: (id: string, method: 'cli' | 'structured' | 'both') => u.as('POST', `/api/config/devices/${id}/pull?method=${method}`),
    /** The device's pin as its full form shows it (null when none). */
    async pinOf(id: string, pin: 'ssh_host_key' | 'gnmi_certificate') {
      const res = await u.as('GET', `/api/devices/${id}`);
      expect(res.status, res.text).toBe(200);
      return res.body[pin];
    },
    async close() {
      await agent.stop();
      await c.close();
    },
  };
}
