/**
 * An agent in a worker thread (the controller's built-in agent, see controller/src/builtin-agent.ts):
 * the same AgentRuntime as `npm run agent`, on the link it is given, logging through its parent.
 * It ends when told to stop (after its running jobs) or when the controller refuses the agent.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { portLink } from '../../../shared/src/jobs/port-link';
import { DRIVERS } from '../drivers';
import { natsAgentLink } from '../nats-link';
import { AgentRuntime } from '../runtime';
import type { AgentThreadCommand, AgentThreadData, AgentThreadEvent } from './data';

const parent = parentPort!;
const data = workerData as AgentThreadData;
const tell = (event: AgentThreadEvent) => parent.postMessage(event);

// Lines go to the parent, which logs them through its own logger (redaction, level, destination).
const log = pino({ level: data.logLevel, base: undefined }, { write: (line: string) => tell({ type: 'log', line }) });
const link = data.natsUrl ? await natsAgentLink(data.natsUrl, data.identity) : portLink(data.link!.port, data.link!.ackWaitMs);
const runtime: AgentRuntime = new AgentRuntime({
  identity: data.identity,
  link,
  drivers: DRIVERS,
  concurrency: data.concurrency,
  connectConcurrency: data.connectConcurrency,
  version: data.version,
  log,
  onRevoked: (reason) => {
    tell({ type: 'revoked', reason });
    void runtime.stop(0).finally(() => process.exit(0));
  },
});
await runtime.start();
parent.on('message', (command: AgentThreadCommand) => {
  if (command.type === 'stop') void runtime.stop(command.graceMs).finally(() => process.exit(0));
});
tell({ type: 'running' });
