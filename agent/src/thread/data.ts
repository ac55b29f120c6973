import type { MessagePort } from 'node:worker_threads';
import type { AgentIdentity } from '../identity';

/** The module a worker thread running an agent starts with (it loads TypeScript through tsx, then main.ts). */
export const AGENT_THREAD_URL = new URL('./boot.mjs', import.meta.url);

/** What the thread is started with (`workerData`; structured-clone friendly). */
export interface AgentThreadData {
  identity: AgentIdentity;
  /** The agent's own NATS link; without it, `link` (served by the controller, shared/src/jobs/port-link.ts). */
  natsUrl: string | null;
  link: { port: MessagePort; ackWaitMs: number } | null;
  concurrency: number;
  connectConcurrency: number;
  version: string;
  logLevel: string;
}

/** From the thread to its parent. */
export type AgentThreadEvent =
  | { type: 'log'; line: string }
  | { type: 'running' }
  /** The controller refused the agent: the thread ends and is not started again. */
  | { type: 'revoked'; reason: string };

/** From the parent to the thread. */
export type AgentThreadCommand = { type: 'stop'; graceMs: number };
