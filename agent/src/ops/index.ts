/**
 * Everything operational around one agent process, set up in a few lines of main.ts: metrics
 * (through instrumented link and drivers), the local health server, what the heartbeat reports
 * about the agent's connections, and a bounded graceful stop on SIGTERM.
 */
import type { Logger } from 'pino';
import type { NatsConnection } from 'nats';
import type { AgentLink } from '../../../shared/src/jobs/link';
import type { HeartbeatHealth } from '../../../shared/src/jobs/messages';
import { watchNats, type NatsWatch } from '../../../shared/src/ops/nats-health';
import { stopOnSignals as onSignals } from '../../../shared/src/ops/signals';
import { AgentConfigError } from '../config';
import type { DriverRegistry } from '../drivers';
import type { AgentOpsConfig } from './config';
import { AgentMetrics } from './metrics';
import { releaseOnClose } from './release';
import { AgentHealth } from './server';

export { loadAgentOpsConfig, type AgentOpsConfig } from './config';

/** What an agent says about its connections in each heartbeat. */
export type ConnectionReport = HeartbeatHealth;

export interface AgentOpsOptions {
  config: AgentOpsConfig;
  identity: { agent_id: string; name: string; pool: string; heartbeat_interval_ms: number };
  version: string;
  link: AgentLink & { connection?: NatsConnection };
  drivers: DriverRegistry;
  /** Controller base URL (SWITCHBOARD_URL or the one enrolled with): probed over HTTP for the heartbeat report. */
  controllerUrl: string | null;
  log: Logger;
}

const HTTP_PROBE_EVERY_MS = 30_000;

export class AgentOps {
  readonly metrics: AgentMetrics;
  readonly health: AgentHealth;
  /** The link to hand the runtime: counted, and releasing unsettled jobs when it closes. */
  readonly link: AgentLink;
  readonly drivers: DriverRegistry;
  private readonly nats: NatsWatch | null;
  private httpProbe: { at: number; result: ConnectionReport['controller_http']; running?: Promise<void> } = { at: 0, result: null };
  port: number | null = null;

  constructor(private readonly o: AgentOpsOptions) {
    this.metrics = new AgentMetrics({ agent_id: o.identity.agent_id, name: o.identity.name, pool: o.identity.pool, version: o.version });
    const nc = o.link.connection;
    const reconnected = () => {
      this.metrics.natsReconnected();
      o.log.warn({ nats: 'reconnect', server: nc?.getServer() }, 'NATS connection reconnect');
    };
    this.nats = nc ? watchNats(nc, reconnected, () => o.log.warn({ nats: 'disconnect' }, 'NATS connection disconnect')) : null;
    this.link = releaseOnClose(this.metrics.instrumentLink(o.link));
    this.drivers = this.metrics.instrumentDrivers(o.drivers);
    this.health = new AgentHealth({
      metrics: this.metrics,
      metricsToken: o.config.metricsToken,
      nats: () => nc,
      heartbeatMs: () => o.identity.heartbeat_interval_ms,
    });
    this.metrics.setSources({
      natsConnected: this.nats ? () => this.nats!.connected : undefined,
      controllerReachable: () => this.health.controllerReachable(),
    });
  }

  /** Starts the health server when SWITCHBOARD_AGENT_HEALTH_PORT is set. */
  async start(runtime: { activeJobs: number }, maxJobs: number): Promise<void> {
    this.metrics.setSources({ active: () => runtime.activeJobs, max: maxJobs });
    if (this.o.config.healthPort === null) return;
    try {
      this.port = await this.health.listen(this.o.config.healthPort, this.o.config.healthHost);
    } catch (err) {
      throw new AgentConfigError(
        `SWITCHBOARD_AGENT_HEALTH_PORT: cannot listen on ${this.o.config.healthHost}:${this.o.config.healthPort}: ${(err as Error).message}`,
      );
    }
    this.o.log.info({ port: this.port, host: this.o.config.healthHost }, 'health and metrics server listening');
  }

  /** The heartbeat's report on NATS and the controller (the HTTP probe runs in the background). */
  connectionReport(): ConnectionReport {
    const last = this.metrics.lastAnswerAt;
    this.probeControllerHttp();
    return {
      nats_connected: this.nats?.connected ?? true,
      nats_reconnects: this.nats?.reconnects ?? 0,
      controller_answered_at: last ? new Date(last).toISOString() : null,
      controller_http: this.httpProbe.result,
    };
  }

  private probeControllerHttp(): void {
    const url = this.o.controllerUrl;
    if (!url || this.httpProbe.running || Date.now() - this.httpProbe.at < HTTP_PROBE_EVERY_MS) return;
    this.httpProbe.running = (async () => {
      let result: ConnectionReport['controller_http'];
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(3_000) });
        await res.body?.cancel();
        result = { ok: res.ok, error: res.ok ? null : `HTTP ${res.status}`, checked_at: new Date().toISOString() };
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        result = { ok: false, error: (e.cause?.code ?? e.cause?.message ?? e.message).slice(0, 200), checked_at: new Date().toISOString() };
      }
      this.httpProbe = { at: Date.now(), result };
    })();
  }

  /**
   * SIGTERM / SIGINT: readiness answers 503, the runtime takes no new jobs and lets running
   * ones finish for up to the grace (SWITCHBOARD_AGENT_STOP_GRACE_SECONDS); what is still
   * running then is handed back to the pool at once; exit 0. A second signal exits at once.
   */
  stopOnSignals(runtime: { stop(graceMs: number): Promise<void> }, exit?: (code: number) => void): void {
    const { log, config } = this.o;
    onSignals({
      log,
      timeoutMs: config.stopGraceMs + 15_000,
      setting: 'SWITCHBOARD_AGENT_STOP_GRACE_SECONDS plus 15 s',
      details: { grace_seconds: config.stopGraceMs / 1000 },
      beginDrain: () => this.health.beginDrain(),
      stop: async () => {
        await runtime.stop(config.stopGraceMs);
        await this.health.close();
      },
      exit,
    });
  }
}
