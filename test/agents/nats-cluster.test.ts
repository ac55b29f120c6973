/**
 * Past one NATS server: a three-node NATS cluster with R3 job streams
 * (SWITCHBOARD_NATS_REPLICAS=3, NATS_URL listing all three), one node SIGKILLed and started again
 * in the middle of a snapshot. Every device is recorded exactly once, no job is left open, and
 * the controller and agent processes reconnect without a restart. 200 devices here; 1,000 with
 * `npm run bench -- cluster`.
 */
import { afterAll, expect, it } from 'vitest';
import { stopAll } from '../helpers/processes';
import { runClusterSnapshot } from './cluster-snapshot';

const DEVICES = 200;
const AGENTS = 2;

afterAll(stopAll);

it('completes a snapshot across a node kill and restart, each device recorded once', { timeout: 360_000 }, async () => {
  const facts = await runClusterSnapshot({
    devices: DEVICES,
    agents: AGENTS,
    concurrency: 8,
    log: (t) => console.log(`[cluster ${new Date().toISOString().slice(11, 19)}] ${t}`),
  });

  expect(facts.replicas).toEqual([3, 3]);
  expect(facts.doneAtKill).toBeLessThan(DEVICES); // the node died mid-run
  expect(facts.snapshot).toMatchObject({ status: 'completed', total_devices: DEVICES, successful_devices: DEVICES, failed_devices: 0 });
  // Exactly once, from the database: one config version per device, every job final, none re-recorded.
  expect(facts.devicesWithVersion).toBe(DEVICES);
  expect(facts.versionsPerDevice.every((n) => n === 1)).toBe(true);
  expect(facts.jobs).toBe(DEVICES);
  expect(facts.openJobs).toBe(0);
  expect(facts.recordFailures).toBe(0);
  // Everyone that lost its server logged a reconnect and kept running; all agents heartbeat again.
  expect(facts.clientsOnKilled).toContain('switchboard-controller');
  expect(facts.clientsOnKilled.some((c) => c.startsWith('switchboard-agent '))).toBe(true);
  expect(facts.reconnected.sort()).toEqual([...facts.clientsOnKilled].sort());
  expect(facts.agentsNeverRestarted).toBe(AGENTS);
  expect(facts.agentsHeardAfterRestart).toBe(AGENTS);
});
