/**
 * One built-in agent in a worker thread, supervised: so that the agent's work (SSH sessions,
 * signatures, parsing) runs beside the controller's event loop rather than on it, and the
 * embedded default uses a second core. The thread logs through the controller's logger; one that
 * crashes is started again after a backoff; stop() ends it after its running jobs.
 *
 * The thread program is the agent package's (its URL comes in through `url`, from the composition
 * file), so this file imports nothing from agent/.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import type { AgentLink } from '../../../shared/src/jobs/link';
import { serveLinkOverPort, type ServedLink } from '../../../shared/src/jobs/port-link';

/** Backoff between restarts of a crashed thread: doubling from the first to the last. */
const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A thread that ran this long before it crashed restarts after the first backoff again. */
const STABLE_MS = 60_000;
/** How long stop() waits past the jobs' grace before it terminates the thread. */
const STOP_MARGIN_MS = 5_000;

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

export interface AgentThreadOptions {
  /** The thread's program (agent/src/thread/boot.mjs). */
  url: URL;
  /** Its workerData, except the link. */
  data: Record<string, unknown>;
  /** In-process: a fresh agent link to serve to each thread started; null when the thread opens its own NATS link. */
  link: (() => AgentLink) | null;
  log: FastifyBaseLogger;
}

type ThreadEvent = { type: 'log'; line: string } | { type: 'running' } | { type: 'revoked'; reason: string };

export class AgentThread {
  private worker: Worker | null = null;
  private served: ServedLink | null = null;
  private stopping = false;
  private revoked = false;
  private backoffMs = RESTART_FIRST_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  /** How many times a crashed thread was started again. */
  restarts = 0;

  constructor(private readonly o: AgentThreadOptions) {}

  /** Starts the thread; rejects when it ends before its agent runs (a bad identity, a NATS it cannot reach). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => this.launch(resolve, reject));
  }

  /** The running thread's event loop use (for the benchmarks' CPU per thread). */
  eventLoopUtilization() {
    return this.worker?.performance.eventLoopUtilization();
  }

  /** The running thread (tests end it to see it restarted). */
  get thread(): Worker | null {
    return this.worker;
  }

  /** Lets running jobs finish (up to graceMs), then ends the thread; no restart follows. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (worker) {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'stop', graceMs });
      const timer = setTimeout(() => void worker.terminate(), graceMs + STOP_MARGIN_MS);
      await exited;
      clearTimeout(timer);
    }
    await this.served?.close();
  }

  private launch(onRunning?: () => void, onEarlyExit?: (err: Error) => void): void {
    const { port1, port2 } = new MessageChannel();
    const link = this.o.link?.() ?? null;
    this.served = link ? serveLinkOverPort(link, port1) : null;
    const worker = new Worker(this.o.url, {
      workerData: { ...this.o.data, link: link ? { port: port2, ackWaitMs: link.ackWaitMs } : null },
      transferList: link ? [port2] : [],
    });
    this.worker = worker;
    const startedAt = Date.now();
    let running = false;
    let failure: Error | null = null;
    worker.on('message', (event: ThreadEvent) => {
      if (event.type === 'log') return this.relay(event.line);
      if (event.type === 'revoked') {
        this.revoked = true;
        return this.o.log.warn({ reason: event.reason }, 'the built-in agent was revoked; it takes no more jobs until the next start');
      }
      running = true;
      onRunning?.();
    });
    worker.on('error', (err) => {
      failure = err;
      this.o.log.error({ err }, 'the built-in agent thread failed');
    });
    worker.on('exit', (code) => {
      this.worker = null;
      void this.served?.close();
      if (this.stopping || this.revoked) return;
      if (!running && onEarlyExit) return onEarlyExit(failure ?? new Error(`the built-in agent thread ended with code ${code} before it ran`));
      this.backoffMs = Date.now() - startedAt > STABLE_MS ? RESTART_FIRST_MS : this.backoffMs;
      this.o.log.error({ code, restart_in_ms: this.backoffMs }, 'the built-in agent thread ended; starting it again');
      this.restartTimer = setTimeout(() => {
        this.restarts += 1;
        this.launch();
      }, this.backoffMs);
      this.restartTimer.unref();
      this.backoffMs = Math.min(this.backoffMs * 2, RESTART_MAX_MS);
    });
  }

  /** Logs a line of the thread's pino through the controller's logger, at its level. */
  private relay(line: string): void {
    try {
      const { level, msg, time: _time, ...fields } = JSON.parse(line) as { level: number; msg?: string; time?: number };
      this.o.log[LEVELS[level] ?? 'info'](fields, msg ?? '');
    } catch {
      this.o.log.info(line.trim());
    }
  }
}
