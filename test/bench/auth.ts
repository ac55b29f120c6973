/**
 * Auth benchmark (`npm run bench -- auth [--connections N] [--duration S]`).
 *
 * A controller on a fresh PostgreSQL database in this process; autocannon in a child process
 * (so it does not share the controller's event loop) drives three scenarios and prints
 * figures, not a verdict:
 *   - POST /api/auth/login    (password hashing dominates: one argon2id verify per request)
 *   - POST /api/auth/refresh  (single-use tokens: every answer's refresh_token is sent next,
 *                              from a pool of one session per connection)
 *   - GET  /api/auth/me       (JWT check plus the session lookup that makes revocation instant)
 * Rate limit and lockout are raised for the run so they do not cap the figures.
 *
 * Options: --connections N (16), --duration S per scenario (10).
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { ADMIN } from '../helpers/controller';
import { benchController } from './controller';

const run$ = promisify(execFile);

interface Scenario {
  name: string;
  url: string;
  connections: number;
  duration: number;
  /** GET with this bearer token */
  token?: string;
  /** POST this JSON body */
  body?: string;
  /** POST /refresh, each request with the next token of the pool */
  refreshTokens?: string[];
}

interface Figures {
  name: string;
  requestsPerSecond: number;
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/**
 * The load generator, plain JavaScript for `node -e` (no TypeScript loader needed there; not a
 * worker thread, where autocannon acts as one of its own workers). It reads the scenario from
 * SCENARIO and prints the figures as JSON. A refresh answer's token goes back into the pool, so
 * each token is sent once and every connection always holds a live session.
 */
const DRIVER = `
const scenario = JSON.parse(process.env.SCENARIO);
const autocannon = require(scenario.autocannonPath);
const pool = [...(scenario.refreshTokens || [])];
const request = scenario.refreshTokens
  ? {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: pool.shift() }) }),
      onResponse: (status, body) => { if (status === 200) pool.push(JSON.parse(body).refresh_token); },
    }
  : scenario.body
    ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: scenario.body }
    : { method: 'GET', headers: { authorization: 'Bearer ' + scenario.token } };
autocannon({ url: scenario.url, connections: scenario.connections, duration: scenario.duration, requests: [request] }).then((r) =>
  console.log(
    JSON.stringify({
      name: scenario.name,
      requestsPerSecond: r.requests.average,
      requests: r.requests.total,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
    }),
  );
`;

async function drive(scenario: Scenario): Promise<Figures> {
  const autocannonPath = createRequire(import.meta.url).resolve('autocannon');
  const { stdout } = await run$(process.execPath, ['-e', DRIVER], {
    env: { ...process.env, SCENARIO: JSON.stringify({ ...scenario, autocannonPath }) },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Figures;
}

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a whole number above 0`);
  return value;
}

export async function run(args: string[] = []): Promise<void> {
  const connections = option(args, 'connections', 16);
  const duration = option(args, 'duration', 10);

  const c = await benchController(
    {},
    { settings: { 'security.rate_limit.requests_per_minute': 100_000, 'security.rate_limit.failed_login_limit': 1000 } },
  );
  const { base } = c;
  const login = async () => {
    const res = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    if (!res.ok) throw new Error(`login → ${res.status} ${await res.text()}`);
    return (await res.json()) as { access_token: string; refresh_token: string };
  };

  try {
    const { access_token: token } = await login();
    const sessions = await Promise.all(Array.from({ length: connections }, login));
    const scenarios: Scenario[] = [
      { name: 'POST /api/auth/login', url: `${base}/api/auth/login`, connections, duration, body: JSON.stringify(ADMIN) },
      { name: 'POST /api/auth/refresh', url: `${base}/api/auth/refresh`, connections, duration, refreshTokens: sessions.map((s) => s.refresh_token) },
      { name: 'GET /api/auth/me', url: `${base}/api/auth/me`, connections, duration, token },
    ];
    console.log(`auth benchmark: ${connections} connections, ${duration} s per scenario, controller and PostgreSQL on this machine`);
    console.log(
      `machine load average at start: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('scenario,requests_per_s,p50_ms,p99_ms,requests,non_2xx,errors');
    for (const scenario of scenarios) {
      const figures = await drive(scenario);
      console.log(
        `${figures.name},${Math.round(figures.requestsPerSecond)},${figures.p50},${figures.p99},${figures.requests},${figures.non2xx},${figures.errors}`,
      );
    }
  } finally {
    await c.close();
  }
}
