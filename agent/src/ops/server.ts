/**
 * The agent's local ops server (SWITCHBOARD_AGENT_HEALTH_PORT, bound to
 * SWITCHBOARD_AGENT_HEALTH_HOST, 127.0.0.1 by default):
 *   GET /healthz  200 while the process runs
 *   GET /readyz   200 when it can take jobs: NATS answers, a controller answered a recent
 *                 heartbeat, not stopping; 503 naming the failing part otherwise
 *   GET /metrics  Prometheus text; needs SWITCHBOARD_METRICS_TOKEN as a bearer token when set
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NatsConnection } from 'nats';
import { bearerMatches } from '../../../shared/src/ops/bearer';
import { pingNats, type CheckResult } from '../../../shared/src/ops/nats-health';
import type { AgentMetrics } from './metrics';

export interface AgentHealthDeps {
  metrics: AgentMetrics;
  metricsToken: string | null;
  /** The agent's NATS connection (absent for an in-process link). */
  nats: () => NatsConnection | undefined;
  /** Heartbeat interval now in use: a controller answer older than 3 of them counts as unreachable. */
  heartbeatMs: () => number;
  startedAt?: number;
}

export interface AgentReadiness {
  ready: boolean;
  failing: string[];
  checks: { nats: CheckResult; controller: CheckResult; shutdown: CheckResult };
}

export class AgentHealth {
  private draining = false;
  private server: Server | null = null;
  private readonly startedAt: number;

  constructor(private readonly deps: AgentHealthDeps) {
    this.startedAt = deps.startedAt ?? Date.now();
  }

  /** From now on /readyz answers 503 (the agent takes no new jobs). */
  beginDrain(): void {
    this.draining = true;
  }

  /** Whether a controller answered a heartbeat recently (null before the first heartbeat). */
  controllerReachable(): boolean | null {
    const last = this.deps.metrics.lastAnswerAt;
    if (last === null) return Date.now() - this.startedAt < 3 * this.deps.heartbeatMs() ? null : false;
    return Date.now() - last <= 3 * this.deps.heartbeatMs();
  }

  async readiness(): Promise<AgentReadiness> {
    const nc = this.deps.nats();
    const nats: CheckResult = nc ? await pingNats(nc) : { ok: true };
    const reachable = this.controllerReachable();
    const last = this.deps.metrics.lastAnswerAt;
    const controller: CheckResult =
      reachable === false
        ? {
            ok: false,
            error: last
              ? `no controller answered a heartbeat for ${Math.round((Date.now() - last) / 1000)} s`
              : 'no controller has answered a heartbeat yet',
          }
        : { ok: true };
    const shutdown: CheckResult = this.draining ? { ok: false, error: 'this agent is stopping' } : { ok: true };
    const checks = { nats, controller, shutdown };
    const failing = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([name, c]) => `${name}: ${c.error}`);
    return { ready: failing.length === 0, failing, checks };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(405, { error: `Method ${req.method} not allowed`, code: 'METHOD_NOT_ALLOWED' }, { allow: 'GET, HEAD' });
    if (path === '/healthz') return json(200, { status: 'ok', uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000) });
    if (path === '/readyz') {
      const report = await this.readiness();
      if (report.ready) return json(200, { status: 'ready', checks: report.checks });
      return json(503, { error: `Not ready: ${report.failing.join('; ')}`, code: 'NOT_READY', checks: report.checks });
    }
    if (path === '/metrics') {
      if (this.deps.metricsToken && !bearerMatches(req.headers.authorization, this.deps.metricsToken)) {
        return json(
          401,
          { error: 'GET /metrics needs the bearer token set in SWITCHBOARD_METRICS_TOKEN', code: 'METRICS_TOKEN_REQUIRED' },
          { 'www-authenticate': 'Bearer realm="switchboard-metrics"' },
        );
      }
      const { contentType, body } = await this.deps.metrics.text();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(body);
      return;
    }
    json(404, { error: `Route not found: ${req.method} ${path}`, code: 'ROUTE_NOT_FOUND' });
  }

  /** Starts listening; resolves to the bound port. */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ error: `Internal error: ${(err as Error).message}`, code: 'INTERNAL' }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
