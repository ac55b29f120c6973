/**
 * Controller health, readiness and metrics on a real controller and PostgreSQL: /healthz,
 * /readyz with each failing part named (unapplied migration, unreachable database), and
 * /metrics content (HTTP, jobs, device session errors by cause, agents, database pool)
 * after real jobs ran through an in-process agent against the SSH simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { freePort } from '../helpers/net';
import { withAdmin } from '../helpers/postgres';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { enrollAgent, makeDevice, makeSite, startAgent } from '../agents/helpers';
import { has, metric, parseMetrics, until, verifiedHostKey } from './helpers';

const HOST_KEY = verifiedHostKey();

const TOKEN = 'metrics-token-0123456789abcdef';

let tc: TestController;
let dbName: string;
const stops: (() => Promise<unknown>)[] = [];
let stopAgent: (() => Promise<unknown>) | null = null;

beforeAll(async () => {
  tc = await startTestController({ config: { metricsToken: TOKEN } });
  dbName = new URL(tc.config.databaseUrl!).pathname.slice(1);
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await withAdmin((c) => c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`)).catch(() => undefined);
  await tc?.close();
});

const scrape = async (token: string | null = TOKEN) => tc.request('GET', '/metrics', { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('GET /readyz', () => {
  // First in the file: readiness remembers once every migration is applied.
  it('answers 503 naming a migration that is not applied, then 200 once it is', async () => {
    const last = await tc.db('knex_migrations').orderBy('name', 'desc').first();
    await tc.db('knex_migrations').where({ id: last.id }).delete();
    try {
      const res = await tc.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('NOT_READY');
      expect(res.body.error).toContain(`migrations: 1 migration(s) not applied: ${last.name}`);
      expect(res.body.checks.migrations).toMatchObject({ ok: false });
      expect(res.body.checks.database).toMatchObject({ ok: true });
    } finally {
      await tc.db('knex_migrations').insert(last);
    }
    const ok = await tc.request('GET', '/readyz');
    expect(ok.status).toBe(200);
  });

  it('answers 200 with every check when ready, without a token; NATS is skipped without NATS_URL', async () => {
    const res = await tc.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({
      status: 'ready',
      checks: {
        database: { ok: true, latency_ms: expect.any(Number) },
        migrations: { ok: true },
        nats: { ok: true, skipped: expect.stringContaining('NATS_URL') },
        shutdown: { ok: true },
      },
    });
  });

  it('answers 503 naming the database when it refuses connections, while /healthz stays 200; ready again after', async () => {
    await withAdmin(async (c) => {
      await c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    });
    try {
      const res = await until('readiness to fail', async () => {
        const r = await tc.request('GET', '/readyz');
        return r.status === 503 ? r : null;
      });
      expect(res.body.code).toBe('NOT_READY');
      expect(res.body.error).toMatch(/^Not ready: database: /);
      expect(res.body.checks.database.ok).toBe(false);
      expect(res.body.checks.database.error).toMatch(/not currently accepting connections|terminat/i);
      // Neither the database URL nor any credential shows.
      expect(res.text).not.toContain('postgres://');
      expect(res.text).not.toContain(tc.config.databaseUrl!);
      const health = await tc.request('GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', uptime_seconds: expect.any(Number) });
      // Metrics still answer; the cluster-wide figures say they could not be read.
      const m = parseMetrics((await scrape()).text);
      expect(metric(m, 'switchboard_metrics_database_ok')).toBe(0);
    } finally {
      await withAdmin((c) => c.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`));
    }
    await until('readiness to come back', async () => (await tc.request('GET', '/readyz')).status === 200);
  });
});

describe('GET /metrics', () => {
  let good: SimSshDevice;
  let badAuth: SimSshDevice;

  beforeAll(async () => {
    good = await startSshDevice({ hostKey: HOST_KEY, hostname: 'good-1' });
    badAuth = await startSshDevice({ hostKey: HOST_KEY, hostname: 'locked-1', faults: { rejectAuth: true } });
    stops.push(
      () => good.close(),
      () => badAuth.close(),
    );
  });

  it('refuses a missing or wrong token with 401, and a user access token too', async () => {
    for (const token of [null, 'wrong-token-wrong-token', tc.adminToken]) {
      const res = await scrape(token);
      expect(res.status, String(token)).toBe(401);
      expect(res.body.code).toBe('METRICS_TOKEN_REQUIRED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.text).not.toContain(TOKEN);
    }
  });

  it('counts HTTP requests and latency by route template, jobs by kind, pool and status, session errors by cause, agents, the pool', async () => {
    const org = await tc.createOrgUser(['org_admin']);
    const site = await makeSite(tc, org);
    const { identity } = await enrollAgent(tc, org, { name: 'metrics-agent', site_id: site.id });
    const agent = await startAgent(tc, identity);
    stopAgent = agent.stop;
    stops.push(agent.stop);
    const closed = await freePort(); // nothing listens: connection refused
    const ids = {
      good: await makeDevice(tc, org, { port: good.port, site_id: site.id }),
      auth: await makeDevice(tc, org, { port: badAuth.port, site_id: site.id }),
      refused: await makeDevice(tc, org, { port: closed, site_id: site.id }),
    };
    const jobIds = await tc.services.jobs.submit(
      Object.values(ids).map((deviceId) => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 30_000 })),
    );
    const outcomes = await tc.services.jobs.wait(jobIds, 40_000);
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'failed', 'failed']);
    // A job of an organization without agents waits, queued, in its default pool.
    const lonely = await tc.createOrgUser(['org_admin']);
    const waiting = await makeDevice(tc, lonely, { port: good.port });
    await tc.services.jobs.submit([{ orgId: lonely.orgId, kind: 'backup', deviceId: waiting, params: { methods: ['cli'] }, deadlineMs: 60_000 }]);
    await until('the agent to be online', async () => {
      const res = await tc.request('GET', '/api/agents', { token: org.token });
      return res.body.agents.some((a: any) => a.status === 'online');
    });
    await until('the waiting job to get its pool', async () => (await tc.db('jobs').where({ device_id: waiting }).first())?.pool === 'default');

    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.headers.get('content-type')).toContain('version=0.0.4');
    const m = parseMetrics(res.text);

    // HTTP: by method, route template (never the raw URL with ids) and status.
    expect(metric(m, 'switchboard_http_requests_total', { method: 'POST', route: '/api/devices', status: '201' })).toBeGreaterThanOrEqual(3);
    expect(metric(m, 'switchboard_http_request_duration_seconds_count', { method: 'POST', route: '/api/devices' })).toBeGreaterThanOrEqual(3);
    expect(has(m, 'switchboard_http_request_duration_seconds_bucket', { route: '/api/devices', le: '0.1' })).toBe(true);
    expect(m.filter((s) => s.name === 'switchboard_http_requests_total').every((s) => !/[0-9a-f]{8}-[0-9a-f]{4}/.test(s.labels.route))).toBe(true);

    // Jobs this replica recorded final, by kind, pool and status; their durations.
    expect(metric(m, 'switchboard_jobs_finished_total', { kind: 'test_credential', pool: site.id, status: 'succeeded' })).toBe(1);
    expect(metric(m, 'switchboard_jobs_finished_total', { kind: 'test_credential', pool: site.id, status: 'failed' })).toBe(2);
    expect(metric(m, 'switchboard_job_duration_seconds_count', { kind: 'test_credential', pool: site.id })).toBe(3);
    expect(metric(m, 'switchboard_job_queue_seconds_count', { kind: 'test_credential', pool: site.id })).toBe(3);
    // Open jobs of the whole installation.
    expect(metric(m, 'switchboard_jobs', { kind: 'backup', pool: 'default', status: 'queued' })).toBe(1);

    // Device session errors by cause.
    expect(metric(m, 'switchboard_device_session_errors_total', { cause: 'auth', kind: 'test_credential' })).toBe(1);
    expect(metric(m, 'switchboard_device_session_errors_total', { cause: 'refused', kind: 'test_credential' })).toBe(1);

    // Agents per site (pool) and status.
    expect(metric(m, 'switchboard_agents', { pool: site.id, site: site.name, status: 'online' })).toBe(1);
    expect(metric(m, 'switchboard_agents', { pool: site.id, status: 'offline' })).toBe(0);

    // Database pool, process figures, readiness of the figures.
    expect(metric(m, 'switchboard_db_pool_connections', { state: 'max' })).toBe(20);
    expect(has(m, 'switchboard_db_pool_connections', { state: 'used' })).toBe(true);
    expect(metric(m, 'switchboard_metrics_database_ok')).toBe(1);
    expect(metric(m, 'switchboard_draining')).toBe(0);
    expect(has(m, 'process_resident_memory_bytes')).toBe(true);
    expect(has(m, 'nodejs_eventloop_lag_seconds')).toBe(true);
    // No NATS_URL: no reconnects.
    expect(metric(m, 'switchboard_nats_reconnects_total')).toBe(0);
    // Never a secret: the metrics token, device passwords.
    expect(res.text).not.toContain(TOKEN);
    expect(res.text).not.toContain('admin:admin');
  });

  it('is off (404 naming the setting) while SWITCHBOARD_METRICS_TOKEN is unset', async () => {
    // In-process agents go first: their link spins once the engine's hub has closed.
    await stopAgent?.();
    tc.config.metricsToken = null;
    await tc.restart();
    try {
      const res = await scrape();
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'METRICS_DISABLED', error: expect.stringContaining('SWITCHBOARD_METRICS_TOKEN') });
    } finally {
      tc.config.metricsToken = TOKEN;
      await tc.restart();
    }
    expect((await scrape()).status).toBe(200);
  });
});

describe('draining (the first step of a SIGTERM stop)', () => {
  it('turns readiness to 503 naming the shutdown and sets switchboard_draining, while the API still answers', async () => {
    tc.services.ops!.beginDrain();
    const res = await tc.request('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('Not ready: shutdown: this replica is shutting down');
    expect(res.body.checks).toMatchObject({ database: { ok: true }, migrations: { ok: true }, shutdown: { ok: false } });
    expect(metric(parseMetrics((await scrape()).text), 'switchboard_draining')).toBe(1);
    expect((await tc.request('GET', '/api/auth/me', { token: tc.adminToken })).status).toBe(200);
  });
});
