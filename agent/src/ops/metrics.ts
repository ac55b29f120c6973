/**
 * The agent's Prometheus registry, and what feeds it: the runner's job observer (jobs received
 * and finished), wrappers of the job link (events published, heartbeats answered) and of the
 * drivers (sessions opened, session errors by DriverError cause, how long each call takes).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AgentLink } from '../../../shared/src/jobs/link';
import type { DriverRegistry } from '../drivers';
import { DriverError, type DeviceDriver, type DeviceSession, type Transport } from '../drivers/types';

const JOB_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/**
 * Top-level string fields of a JWS payload, unverified: only for labels (the runner verifies
 * every message). Reads the first bytes only: the fields labelled come before a result's bulk,
 * and a whole result (a config and its transcript) is not worth reading twice. Events are in the
 * detached form (JSON after the first line break), job messages in the compact one (base64url
 * between the first two dots).
 */
function labelsOf(token: string): Record<string, string> {
  const nl = token.indexOf('\n');
  let head: string;
  if (nl >= 0) head = token.slice(nl + 1, nl + 1 + 768);
  else {
    const start = token.indexOf('.') + 1;
    const end = token.indexOf('.', start);
    head = start > 0 && end > start ? Buffer.from(token.slice(start, Math.min(end, start + 1024)), 'base64url').toString('utf8') : '';
  }
  const labels: Record<string, string> = {};
  for (const m of head.matchAll(/"(job_id|kind|type|status)":"([^"\\]{1,64})"/g)) labels[m[1]] ??= m[2];
  return labels;
}

/**
 * `target` with some members replaced; every other member is the target's own (methods bound
 * to it), so driver-specific session methods and private state keep working.
 */
function overlay<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return (overrides as Record<PropertyKey, unknown>)[prop];
      const value = Reflect.get(t, prop, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

export interface AgentInfo {
  agent_id: string;
  name: string;
  pool: string;
  version: string;
}

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly received: Counter<'kind'>;
  private readonly finished: Counter<'kind' | 'status'>;
  private readonly duration: Histogram<'kind' | 'status'>;
  private readonly published: Counter<'type'>;
  private readonly publishFailures: Counter;
  private readonly heartbeats: Counter<'answered'>;
  private readonly requestSeconds: Histogram<'type' | 'answered'>;
  private readonly sessionsOpened: Counter<'transport'>;
  private readonly sessionErrors: Counter<'transport' | 'cause'>;
  private readonly sessionsActive: Gauge<'transport'>;
  private readonly callSeconds: Histogram<'transport' | 'call'>;
  private readonly natsReconnects: Counter;
  private sources: { active?: () => number; max?: number; natsConnected?: () => boolean; controllerReachable?: () => boolean | null } = {};
  /** When a heartbeat last got the controller's answer (ms since epoch), or null. */
  lastAnswerAt: number | null = null;

  constructor(info: AgentInfo) {
    const registers = [this.registry];
    // Event-loop delay sampled every 100 ms, not prom-client's 10 ms: 100 wake-ups a second per
    // process cost an idle agent about a third of its CPU, and a site may run many agents.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
    const self = this;
    new Gauge({
      name: 'switchboard_agent_info',
      help: 'This agent: id, name, pool and version (always 1).',
      labelNames: ['agent_id', 'name', 'pool', 'version'],
      registers,
    }).set({ ...info }, 1);
    new Gauge({
      name: 'switchboard_agent_jobs_active',
      help: 'Jobs running on this agent now.',
      registers,
      collect() {
        this.set(self.sources.active?.() ?? 0);
      },
    });
    new Gauge({
      name: 'switchboard_agent_jobs_max',
      help: 'Jobs this agent runs at once (SWITCHBOARD_AGENT_CONCURRENCY).',
      registers,
      collect() {
        this.set(self.sources.max ?? 0);
      },
    });
    this.received = new Counter({
      name: 'switchboard_agent_jobs_received_total',
      help: 'Jobs this agent took (out of job batches), by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.finished = new Counter({
      name: 'switchboard_agent_jobs_finished_total',
      help: 'Job results this agent published, by kind and status.',
      labelNames: ['kind', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'switchboard_agent_job_duration_seconds',
      help: 'From starting a job to storing its result, by kind and status.',
      labelNames: ['kind', 'status'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.published = new Counter({
      name: 'switchboard_agent_events_published_total',
      help: 'Events stored in JetStream for the controller, by type (started, logs, results, rejected).',
      labelNames: ['type'],
      registers,
    });
    this.publishFailures = new Counter({
      name: 'switchboard_agent_publish_failures_total',
      help: 'Failed attempts to publish an event (each is retried).',
      registers,
    });
    this.heartbeats = new Counter({
      name: 'switchboard_agent_heartbeats_total',
      help: 'Heartbeats sent, by whether a controller answered.',
      labelNames: ['answered'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'switchboard_agent_request_seconds',
      help:
        'Round trips of requests to the controller (heartbeat, backup_store before a deploy changes anything, open_jobs), ' +
        'by type and whether a controller answered: how long sessions wait on the controller.',
      labelNames: ['type', 'answered'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.sessionsOpened = new Counter({
      name: 'switchboard_agent_device_sessions_total',
      help: 'Device sessions opened, by transport.',
      labelNames: ['transport'],
      registers,
    });
    this.sessionErrors = new Counter({
      name: 'switchboard_agent_device_session_errors_total',
      help: 'Device session errors by transport and cause (auth, timeout, refused, protocol, device; other when the driver gave none).',
      labelNames: ['transport', 'cause'],
      registers,
    });
    this.sessionsActive = new Gauge({
      name: 'switchboard_agent_device_sessions_active',
      help: 'Device sessions open now, by transport.',
      labelNames: ['transport'],
      registers,
    });
    this.callSeconds = new Histogram({
      name: 'switchboard_agent_device_call_seconds',
      help:
        'How long device sessions took to open and to answer each call (fetchConfig, run, apply, restore, preview), by transport ' +
        'and call, failed ones included: where a job spends its time on the device.',
      labelNames: ['transport', 'call'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.natsReconnects = new Counter({ name: 'switchboard_agent_nats_reconnects_total', help: 'Times this agent reconnected to NATS.', registers });
    new Gauge({
      name: 'switchboard_agent_nats_connected',
      help: '1 while this agent is connected to NATS.',
      registers,
      collect() {
        this.reset();
        if (self.sources.natsConnected) this.set(self.sources.natsConnected() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchboard_agent_controller_reachable',
      help: '1 when the last heartbeat got a controller answer over NATS, 0 when not (absent before the first).',
      registers,
      collect() {
        this.reset();
        const reachable = self.sources.controllerReachable?.();
        if (reachable !== null && reachable !== undefined) this.set(reachable ? 1 : 0);
      },
    });
  }

  /** Where the live figures come from (the runtime and the NATS watch). */
  setSources(sources: AgentMetrics['sources']): void {
    this.sources = { ...this.sources, ...sources };
  }

  natsReconnected(): void {
    this.natsReconnects.inc();
  }

  /** A job taken (the runtime's JobObserver). */
  jobReceived(kind: string): void {
    this.received.inc({ kind });
  }

  /** A job whose result is stored, and how long it took (the runtime's JobObserver). */
  jobFinished(kind: string, status: string, seconds: number): void {
    this.finished.inc({ kind, status });
    this.duration.observe({ kind, status }, seconds);
  }

  /** The link as the runner sees it, counting events and heartbeats on the way through. */
  instrumentLink<L extends AgentLink>(link: L): L {
    const wrapped: AgentLink = {
      ackWaitMs: link.ackWaitMs,
      pull: (max, waitMs, onJob) => link.pull(max, waitMs, onJob),
      publish: async (token, id) => {
        const p = labelsOf(token);
        const type = p.type ?? 'unknown';
        try {
          await link.publish(token, id);
        } catch (err) {
          this.publishFailures.inc();
          throw err;
        }
        this.published.inc({ type });
      },
      request: async (token, timeoutMs) => {
        const started = performance.now();
        const answer = await link.request(token, timeoutMs);
        const type = labelsOf(token).type ?? 'unknown';
        const answered = answer ? 'yes' : 'no';
        this.requestSeconds.observe({ type, answered }, (performance.now() - started) / 1000);
        if (type === 'heartbeat') this.heartbeats.inc({ answered });
        if (answer) this.lastAnswerAt = Date.now();
        return answer;
      },
      close: () => link.close(),
    };
    return overlay(link, wrapped as Partial<L>);
  }

  /** The same drivers, counting sessions and their errors by cause. */
  instrumentDrivers(drivers: DriverRegistry): DriverRegistry {
    const map = new Map<Transport, DeviceDriver>();
    for (const [transport, driver] of drivers) {
      map.set(transport, {
        transport: driver.transport,
        open: async (target, limits, transcript) => {
          const session = await this.timed(transport, 'open', () => driver.open(target, limits, transcript));
          this.sessionsOpened.inc({ transport });
          this.sessionsActive.inc({ transport });
          return this.instrumentSession(transport, session);
        },
      });
    }
    return map;
  }

  /** One device call, timed (callSeconds) and its error counted by cause (sessionErrors). */
  private async timed<R>(transport: Transport, call: string, fn: () => Promise<R>): Promise<R> {
    const started = performance.now();
    try {
      return await fn();
    } catch (err) {
      this.sessionErrors.inc({ transport, cause: err instanceof DriverError ? err.kind : 'other' });
      throw err;
    } finally {
      this.callSeconds.observe({ transport, call }, (performance.now() - started) / 1000);
    }
  }

  private instrumentSession(transport: Transport, session: DeviceSession): DeviceSession {
    let closed = false;
    const guard = <A extends unknown[], R>(call: string, fn: ((...args: A) => Promise<R>) | undefined) =>
      fn && ((...args: A): Promise<R> => this.timed(transport, call, () => fn.apply(session, args)));
    return overlay(session, {
      fetchConfig: guard('fetchConfig', session.fetchConfig),
      ...(session.run ? { run: guard('run', session.run) } : {}),
      ...(session.apply ? { apply: guard('apply', session.apply) } : {}),
      ...(session.restore ? { restore: guard('restore', session.restore) } : {}),
      ...(session.preview ? { preview: guard('preview', session.preview) } : {}),
      close: async () => {
        if (!closed) {
          closed = true;
          this.sessionsActive.dec({ transport });
        }
        await session.close();
      },
    });
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
