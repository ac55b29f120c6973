/**
 * The embedded default of `npm start` for the benchmarks (`--embedded thread|main-thread`): the
 * controller on PGlite in this process (benchController({}, { embedded: true })) and its built-in
 * agent, either in its worker thread as `npm start` runs it (`thread`), or on the controller's event
 * loop as it ran before (`main-thread`, for comparison). Both reach the job engine in-process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { AgentRuntime, DRIVERS, enroll } from '../../agent/src/index';
import { startBuiltinAgent } from '../../controller/src/builtin-agent';
import type { InProcessHub } from '../../shared/src/jobs/inprocess';
import type { benchController } from './controller';
import { NATS_URL, connectSlotsOf } from './fleet';

export type EmbeddedMode = 'thread' | 'main-thread';

export function embeddedModeOf(args: string[]): EmbeddedMode | null {
  const at = args.indexOf('--embedded');
  if (at < 0) return null;
  const mode = args[at + 1] ?? 'thread';
  if (mode !== 'thread' && mode !== 'main-thread') throw new Error('--embedded must be thread or main-thread');
  return mode;
}

export interface EmbeddedAgent {
  /** Event-loop busy seconds so far: the controller's main thread, and the agent's thread (0 on the main thread). */
  busy(): { main: number; agent: number };
  stop(): Promise<void>;
}

const mainBusy = () => performance.eventLoopUtilization().active / 1000;

export async function startEmbeddedAgent(
  c: Awaited<ReturnType<typeof benchController>>,
  mode: EmbeddedMode,
  concurrency: number,
): Promise<EmbeddedAgent> {
  if (mode === 'thread') {
    const agents = await startBuiltinAgent(c.app, { SWITCHBOARD_AGENT_CONCURRENCY: String(concurrency) });
    const threads = [...agents.threads.values()];
    return {
      busy: () => ({ main: mainBusy(), agent: threads.reduce((s, t) => s + (t.eventLoopUtilization()?.active ?? 0) / 1000, 0) }),
      stop: () => agents.stop(),
    };
  }
  const created = (await c.call('POST', '/api/agents', { name: 'bench-main-thread-agent', site_id: null })).body;
  const connectConcurrency = connectSlotsOf(concurrency);
  const identity = await enroll(
    {
      controllerUrl: c.base,
      enrollToken: created.enrollment_token,
      natsUrl: NATS_URL,
      stateDir: mkdtempSync(join(tmpdir(), 'sb-bench-agent-')),
      concurrency,
      connectConcurrency,
      logLevel: 'silent',
    },
    'bench',
    ['job:backup', 'transport:ssh'],
  );
  const hub = c.app.services.jobEngine.transport as InProcessHub;
  const runtime = new AgentRuntime({
    identity,
    link: hub.link(identity.org_id, identity.pool),
    drivers: DRIVERS,
    concurrency,
    connectConcurrency,
    version: 'bench',
    log: pino({ level: 'silent' }),
  });
  await runtime.start();
  return { busy: () => ({ main: mainBusy(), agent: 0 }), stop: () => runtime.stop(2_000) };
}

/** Starts counting event-loop busy time per thread; the answer renders it per device. */
export function busyMeter(agent: EmbeddedAgent): (devices: number) => string {
  const before = agent.busy();
  return (devices) => {
    const after = agent.busy();
    const part = (name: string, s: number) => `${name} ${s.toFixed(1)} s (${((s * 1000) / devices).toFixed(1)} ms per device)`;
    return `  event loop busy per thread: ${part('controller main thread', after.main - before.main)}, ${part('agent thread', after.agent - before.agent)}`;
  };
}
