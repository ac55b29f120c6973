/**
 * Helpers of the discovery suites: a controller with an in-process agent of the user's
 * organization, simulated devices registered in the inventory, and polls awaited through
 * the API (never by timing).
 */
import type { DriverRegistry } from '../../agent/src/drivers';
import { startTestController, type TestController, type TestControllerOptions } from '../helpers/controller';
import { enrollAgent, startAgent, until } from '../agents/helpers';
import { inventoryUser, type InventoryUser } from '../inventory/helpers';

export { until };

export interface DiscoveryEnv {
  c: TestController;
  u: InventoryUser;
  agent: { stop(): Promise<void> };
  close(): Promise<void>;
}

export async function discoveryEnv(options: TestControllerOptions & { drivers?: DriverRegistry; agent?: boolean } = {}): Promise<DiscoveryEnv> {
  const c = await startTestController({ ...options, config: { discovery: { scheduler: false }, ...options.config } });
  const u = await inventoryUser(c, ['org_admin']);
  let agent: { stop(): Promise<void> } = { stop: async () => undefined };
  if (options.agent !== false) {
    const { identity } = await enrollAgent(c, { orgId: u.orgId, token: u.token });
    agent = await startAgent(c, identity, { drivers: options.drivers, concurrency: 16 });
  }
  return {
    c,
    u,
    agent,
    async close() {
      await agent.stop();
      await c.close();
    },
  };
}

/** A device in the inventory that points at a simulated device. */
export async function simInventoryDevice(
  u: InventoryUser,
  sim: { hostname: string; host: string; port: number; deviceType: string },
  opts: { name?: string; profile?: Record<string, unknown>; site_id?: string; fields?: Record<string, unknown> } = {},
): Promise<{ id: string; name: string }> {
  const profile = await u.profile({ username: 'admin', password: 'admin', ssh_port: sim.port, ...opts.profile });
  return u.device(profile.id, {
    name: opts.name ?? sim.hostname,
    host: sim.host,
    device_type: sim.deviceType,
    ...(opts.site_id ? { site_id: opts.site_id } : {}),
    ...opts.fields,
  });
}

/** Queues a poll through the API and waits until it is final; returns the poll result. */
export async function pollNow(u: InventoryUser, deviceId: string, timeoutMs = 30_000): Promise<any> {
  const queued = await u.as('POST', `/api/devices/${deviceId}/poll`);
  if (queued.status !== 202) throw new Error(`poll: HTTP ${queued.status} ${queued.text}`);
  return waitForPoll(u, deviceId, queued.body.poll_id, timeoutMs);
}

export async function waitForPoll(u: InventoryUser, deviceId: string, pollId: string, timeoutMs = 30_000): Promise<any> {
  return until(
    `poll ${pollId} to finish`,
    async () => {
      const history = await u.as('GET', `/api/devices/${deviceId}/poll-history?limit=500`);
      const poll = history.body.polls?.find((p: any) => p.id === pollId);
      return poll && !['queued', 'running'].includes(poll.status) ? poll : null;
    },
    timeoutMs,
    50,
  );
}
