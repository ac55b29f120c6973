/**
 * The agent's local ops server and what it reports, with a real `npm run agent` process over
 * this file's own nats-server: /healthz, /readyz, /metrics (token, jobs, sessions and their
 * errors by cause), the heartbeat's connection report in GET /api/agents, and readiness of
 * both controller and agent while NATS is down, then reconnects counted once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { startAgentProcess, startNats, stopAll, type AgentProcess, type NatsServer } from '../helpers/processes';
import { startSshDevice, type SimSshDevice } from '../sim/ssh';
import { makeDevice, makeSite, type Org } from '../agents/helpers';
import { metric, parseMetrics, until, verifiedHostKey } from './helpers';

const HOST_KEY = verifiedHostKey();

const TOKEN = 'agent-metrics-token-0123456789';

let nats: NatsServer;
let tc: TestController;
let org: Org & { userId: string };
let site: { id: string; name: string };
let agent: AgentProcess;
let agentId: string;
let good: SimSshDevice;
let locked: SimSshDevice;

const agentGet = (path: string, token?: string) =>
  fetch(`${agent.healthUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (r) => ({
    status: r.status,
    type: r.headers.get('content-type') ?? '',
    text: await r.text(),
  }));
const agentMetrics = async () => parseMetrics((await agentGet('/metrics', TOKEN)).text);
const controllerMetrics = async () => parseMetrics((await tc.request('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text);
const agentRow = async () => (await tc.request('GET', '/api/agents', { token: org.token })).body.agents.find((a: any) => a.id === agentId);

beforeAll(async () => {
  nats = await startNats();
  tc = await startTestController({
    settings: { 'agents.heartbeat_seconds': 1, 'agents.offline_after_seconds': 5 },
    config: { natsUrl: nats.url, natsPrefix: 'sb', metricsToken: TOKEN, jobs: { sweepIntervalMs: 200 } },
  });
  org = await tc.createOrgUser(['org_admin']);
  site = await makeSite(tc, org);
  const created = (await tc.request('POST', '/api/agents', { token: org.token, body: { name: 'ops-agent', site_id: site.id } })).body;
  agentId = created.id;
  agent = await startAgentProcess({
    natsUrl: nats.url,
    controllerUrl: tc.url,
    enrollToken: created.enrollment_token,
    concurrency: 4,
    metricsToken: TOKEN,
  });
  good = await startSshDevice({ hostKey: HOST_KEY, hostname: 'edge-1' });
  locked = await startSshDevice({ hostKey: HOST_KEY, hostname: 'edge-2', faults: { rejectAuth: true } });
}, 90_000);

afterAll(async () => {
  await agent?.stop(30_000);
  await good?.close();
  await locked?.close();
  await tc?.close();
  await stopAll();
  await nats?.close();
});

describe('agent ops server', () => {
  it('answers /healthz, and /readyz once a controller answered its heartbeat', async () => {
    const health = await agentGet('/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'ok', uptime_seconds: expect.any(Number) });
    const ready = await until('the agent to be ready', async () => {
      const r = await agentGet('/readyz');
      return r.status === 200 ? r : null;
    });
    expect(JSON.parse(ready.text)).toMatchObject({
      status: 'ready',
      checks: { nats: { ok: true, latency_ms: expect.any(Number) }, controller: { ok: true }, shutdown: { ok: true } },
    });
    expect((await agentGet('/nope')).status).toBe(404);
  });

  it('serves /metrics only with the token, counting jobs, sessions and session errors by cause', async () => {
    expect((await agentGet('/metrics')).status).toBe(401);
    expect((await agentGet('/metrics', 'not-the-token-at-all')).status).toBe(401);
    const ids = [
      await makeDevice(tc, org, { port: good.port, site_id: site.id }),
      await makeDevice(tc, org, { port: locked.port, site_id: site.id }),
    ];
    const jobIds = await tc.services.jobs.submit(
      ids.map((deviceId) => ({ orgId: org.orgId, kind: 'test_credential' as const, deviceId, params: {}, deadlineMs: 30_000 })),
    );
    const outcomes = await tc.services.jobs.wait(jobIds, 40_000);
    expect(outcomes.map((o) => o.status)).toEqual(['succeeded', 'failed']);

    const res = await agentGet('/metrics', TOKEN);
    expect(res.status).toBe(200);
    expect(res.type).toContain('version=0.0.4');
    const m = parseMetrics(res.text);
    expect(metric(m, 'switchboard_agent_info', { agent_id: agentId, name: 'ops-agent', pool: site.id })).toBe(1);
    expect(metric(m, 'switchboard_agent_jobs_max')).toBe(4);
    expect(metric(m, 'switchboard_agent_jobs_active')).toBe(0);
    expect(metric(m, 'switchboard_agent_jobs_received_total', { kind: 'test_credential' })).toBe(2);
    expect(metric(m, 'switchboard_agent_jobs_finished_total', { kind: 'test_credential', status: 'succeeded' })).toBe(1);
    expect(metric(m, 'switchboard_agent_jobs_finished_total', { kind: 'test_credential', status: 'failed' })).toBe(1);
    expect(metric(m, 'switchboard_agent_job_duration_seconds_count', { kind: 'test_credential' })).toBe(2);
    expect(metric(m, 'switchboard_agent_device_sessions_total', { transport: 'ssh' })).toBe(1);
    expect(metric(m, 'switchboard_agent_device_sessions_active', { transport: 'ssh' })).toBe(0);
    expect(metric(m, 'switchboard_agent_device_session_errors_total', { transport: 'ssh', cause: 'auth' })).toBe(1);
    // Both set-ups are timed, the refused one too.
    expect(metric(m, 'switchboard_agent_device_call_seconds_count', { transport: 'ssh', call: 'open' })).toBe(2);
    expect(metric(m, 'switchboard_agent_device_call_seconds_sum', { transport: 'ssh', call: 'open' })).toBeGreaterThan(0);
    expect(metric(m, 'switchboard_agent_events_published_total', { type: 'results' })).toBeGreaterThanOrEqual(1); // both results, one or two events
    expect(metric(m, 'switchboard_agent_heartbeats_total', { answered: 'yes' })).toBeGreaterThanOrEqual(1);
    expect(metric(m, 'switchboard_agent_request_seconds_count', { type: 'heartbeat', answered: 'yes' })).toBeGreaterThanOrEqual(1);
    expect(metric(m, 'switchboard_agent_request_seconds_sum', { type: 'heartbeat', answered: 'yes' })).toBeGreaterThan(0);
    expect(metric(m, 'switchboard_agent_nats_connected')).toBe(1);
    expect(metric(m, 'switchboard_agent_controller_reachable')).toBe(1);
    expect(metric(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(res.text).not.toContain(TOKEN);
  });

  it('reports NATS and controller reachability in its heartbeat, shown in GET /api/agents', async () => {
    // Online, not degraded: on a loaded machine one beat may come late (over two intervals) or
    // while a result event is still pending, so wait for a row the agent reports as online.
    const row = await until('an online heartbeat with the controller HTTP probe', async () => {
      const a = await agentRow();
      return a?.health?.controller_http && a.status === 'online' ? a : null;
    });
    expect(row.health).toMatchObject({
      nats_connected: true,
      nats_reconnects: 0,
      controller_answered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      controller_http: { ok: true, error: null, checked_at: expect.any(String) },
    });
  });
});

describe('NATS down', () => {
  it('makes controller and agent readiness answer 503 naming NATS; both are ready again and count the reconnect once it is back', async () => {
    await nats.kill();
    const c = await until('the controller to report NATS', async () => {
      const r = await tc.request('GET', '/readyz');
      return r.status === 503 ? r : null;
    });
    expect(c.body.code).toBe('NOT_READY');
    expect(c.body.error).toMatch(/^Not ready: nats: /);
    expect(c.body.checks).toMatchObject({ database: { ok: true }, nats: { ok: false } });
    expect(c.text).not.toContain(nats.url.replace('nats://', ''));
    const a = await until('the agent to report NATS', async () => {
      const r = await agentGet('/readyz');
      return r.status === 503 ? r : null;
    });
    expect(JSON.parse(a.text)).toMatchObject({ code: 'NOT_READY', checks: { nats: { ok: false } } });
    expect(JSON.parse(a.text).error).toMatch(/nats: /);
    // Liveness is not readiness: both processes are still up.
    expect((await tc.request('GET', '/healthz')).status).toBe(200);
    expect((await agentGet('/healthz')).status).toBe(200);
    expect(metric(await controllerMetrics(), 'switchboard_nats_connected')).toBe(0);
    expect(metric(await agentMetrics(), 'switchboard_agent_nats_connected')).toBe(0);

    await nats.start();
    await until('the controller to be ready', async () => (await tc.request('GET', '/readyz')).status === 200, 30_000);
    await until('the agent to be ready', async () => (await agentGet('/readyz')).status === 200, 30_000);
    const cm = await controllerMetrics();
    expect(metric(cm, 'switchboard_nats_reconnects_total')).toBeGreaterThanOrEqual(1);
    expect(metric(cm, 'switchboard_nats_connected')).toBe(1);
    expect(metric(await agentMetrics(), 'switchboard_agent_nats_reconnects_total')).toBeGreaterThanOrEqual(1);
    const row = await until('the heartbeat to report the reconnect', async () => {
      const r = await agentRow();
      return r?.health?.nats_reconnects >= 1 ? r : null;
    });
    expect(row.health.nats_connected).toBe(true);
    // Jobs still run afterwards.
    const deviceId = await makeDevice(tc, org, { port: good.port, site_id: site.id });
    const [jobId] = await tc.services.jobs.submit([{ orgId: org.orgId, kind: 'test_credential', deviceId, params: {}, deadlineMs: 30_000 }]);
    const [outcome] = await tc.services.jobs.wait([jobId], 40_000);
    expect(outcome.status).toBe('succeeded');
  });
});
