/**
 * NATS cluster benchmark (`npm run bench -- cluster --devices 1000`): the scenario of
 * test/agents/nats-cluster.test.ts at full size. A three-node NATS cluster with R3 job streams,
 * one snapshot over `--devices` simulated SSH devices through `--agents` agent processes, and the
 * node serving the controller SIGKILLed and started again mid-run (then an agent's node, if no
 * agent was on it). Prints the time and whether every device was recorded exactly once.
 *
 * Options: --devices N (1000), --agents N (2), --concurrency N per agent (16).
 */
import setupTemplate from '../helpers/global-setup';
import { stopAll } from '../helpers/processes';
import { runClusterSnapshot } from '../agents/cluster-snapshot';
import { option } from './controller';

export async function run(args: string[] = []): Promise<void> {
  const devices = option(args, 'devices', 1000);
  const log = (text: string) => console.log(`[cluster ${new Date().toISOString().slice(11, 19)}] ${text}`);
  await setupTemplate();
  try {
    const f = await runClusterSnapshot({ devices, agents: option(args, 'agents', 2), concurrency: option(args, 'concurrency', 16), log });
    const once = f.devicesWithVersion === devices && f.versionsPerDevice.every((n) => n === 1);
    console.log('');
    console.log(
      `NATS cluster benchmark: ${devices} simulated SSH devices, streams with ${f.replicas.join('/')} replicas, node(s) ` +
        `${f.killed.join(', ')} killed and restarted mid-run (${f.doneAtKill} devices done at the first kill)`,
    );
    console.log(
      `snapshot: ${f.snapshot.status}, ${f.snapshot.successful_devices} succeeded, ${f.snapshot.failed_devices} failed, in ` +
        `${f.seconds.toFixed(1)} s → ${(devices / f.seconds).toFixed(1)} devices/s`,
    );
    console.log(
      `exactly once: ${once ? 'yes' : 'NO'} (${f.devicesWithVersion} devices with a version, max ${Math.max(0, ...f.versionsPerDevice)} per ` +
        `device); jobs ${f.jobs}, open ${f.openJobs}, record failures ${f.recordFailures}`,
    );
    console.log(
      `reconnected without a restart: ${f.reconnected.length} of ${f.clientsOnKilled.length} connections on the killed node(s); agents still ` +
        `running ${f.agentsNeverRestarted}, heard after the restart ${f.agentsHeardAfterRestart}`,
    );
  } finally {
    await stopAll();
  }
}
