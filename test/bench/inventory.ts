/**
 * Inventory benchmark (`npm run bench -- inventory`): seeds 10,000 devices through the CSV
 * import (timed), then measures GET /api/devices?limit=50 with and without q under concurrent
 * load. The controller runs in this process against a fresh PostgreSQL database (the test
 * PostgreSQL, SWITCHBOARD_TEST_PG); autocannon runs as a separate process so it does not share
 * the controller's event loop. Each scenario also prints CPU milliseconds per request of this
 * process and of the database's backends, and a baseline (an empty authenticated list): on a
 * shared, busy machine those stay comparable when requests per second do not.
 *
 * Options: --rows N (10000), --connections N (16), --duration S (10).
 * Targets (2-core machine): import ≤ 3 s; list ≥ 2,000 req/s with p99 ≤ 50 ms.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ADMIN } from '../helpers/controller';
import { benchController } from './controller';

const run$ = promisify(execFile);

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

/** CSV text of `rows` devices with realistic, varied values. */
export function inventoryCsv(rows: number): string {
  const makers = [
    ['Arista', 'vendor_eos', 'eos', '7050SX'],
    ['Juniper', 'vendor_junos', 'junos', 'MX204'],
    ['Vendor', 'vendor_ios', 'ios', 'C9300'],
    ['Vendor', 'vendor_nxos', 'nxos', 'N9K-C93180'],
  ];
  const lines = ['name,host,device_type,manufacturer,model,platform,site,description'];
  for (let i = 0; i < rows; i++) {
    const [maker, type, platform, model] = makers[i % makers.length];
    const site = `site-${String(i % 50).padStart(2, '0')}`;
    lines.push(
      `${site}-sw-${String(i).padStart(5, '0')},10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},` +
        `${type},${maker},${model},${platform},${site},"rack ${i % 40}, row ${i % 7}"`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * CPU milliseconds used so far by this process and by the PostgreSQL backends serving its database
 * (Linux /proc; a PostgreSQL on the same machine).
 * Other work on a shared machine inflates wall-clock figures; CPU per request does not move with it.
 */
function cpuNow(postgresPids: number[] = []): { node: number; postgres: number } {
  const usage = process.cpuUsage();
  let ticks = 0;
  for (const pid of postgresPids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // backend ended while reading
    }
  }
  return { node: (usage.user + usage.system) / 1000, postgres: ticks * 10 };
}

interface LoadResult {
  requestsPerSecond: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, token: string, connections: number, duration: number): Promise<LoadResult> {
  const bin = join(import.meta.dirname, '../../node_modules/.bin/autocannon');
  const { stdout } = await run$(bin, ['-j', '-c', String(connections), '-d', String(duration), '-H', `authorization=Bearer ${token}`, url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const result = JSON.parse(stdout);
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export async function run(args: string[] = []): Promise<void> {
  const rows = option(args, 'rows', 10_000);
  const connections = option(args, 'connections', 16);
  const duration = option(args, 'duration', 10);

  const c = await benchController({}, { applicationName: 'inventory-bench' });
  const { db, base } = c;
  const call = (method: string, path: string, token: string | null, body?: string, type?: string) => c.request(method, path, token, body, type);

  try {
    const { access_token: token } = await call('POST', '/api/auth/login', null, JSON.stringify(ADMIN));
    const profile = await call('POST', '/api/profiles', token, JSON.stringify({ name: 'bench', username: 'netops', password: 'bench-password' }));

    // Fill the pool so every backend that will serve requests exists, then find their pids.
    await Promise.all(Array.from({ length: 20 }, () => db.raw('SELECT pg_sleep(0.05)')));
    const backends = async (): Promise<number[]> =>
      (await db.raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'inventory-bench'")).rows.map(
        (r: { pid: number }) => r.pid,
      );
    const pids = await backends();
    const csv = inventoryCsv(rows);
    const cpuBefore = cpuNow(pids);
    const started = performance.now();
    const summary = await call('POST', `/api/devices/import/csv?profile_id=${profile.id}`, token, csv, 'text/csv');
    const importMs = performance.now() - started;
    const cpuAfter = cpuNow(pids);
    if (summary.imported !== rows)
      throw new Error(`import stored ${summary.imported} of ${rows} rows: ${JSON.stringify(summary.errors.slice(0, 3))}`);

    console.log(`inventory benchmark: ${rows} devices, ${connections} connections, ${duration} s per run`);
    console.log(
      `csv import, ${rows} rows: ${(importMs / 1000).toFixed(2)} s (${Math.round(csv.length / 1024)} KiB; cpu node ` +
        `${Math.round(cpuAfter.node - cpuBefore.node)} ms, postgres ${Math.round(cpuAfter.postgres - cpuBefore.postgres)} ms) target ≤ 3 s`,
    );
    console.log(
      `machine load average now: ${(await import('node:os'))
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    console.log('scenario,requests_per_s,p50_ms,p99_ms,errors,non_2xx,cpu_ms_per_request_node,cpu_ms_per_request_postgres');
    for (const [name, path] of [
      // Floor for comparison: authentication (JWT check, session lookup) and one trivial query.
      ['baseline GET /api/sites (empty)', '/api/sites'],
      ['list limit=50', '/api/devices?limit=50'],
      ['list limit=50 q=sw-0042', '/api/devices?limit=50&q=sw-0042'],
      ['list limit=50 q=juniper', '/api/devices?limit=50&q=juniper'],
    ] as const) {
      await load(base + path, token, connections, 2); // warm-up: JIT, plans, pool
      const before = cpuNow(pids);
      const result = await load(base + path, token, connections, duration);
      const after = cpuNow(pids);
      const per = (ms: number) => (ms / Math.max(1, result.requests)).toFixed(3);
      console.log(
        `${name},${Math.round(result.requestsPerSecond)},${result.p50},${result.p99},${result.errors},${result.non2xx},` +
          `${per(after.node - before.node)},${per(after.postgres - before.postgres)}`,
      );
    }
    console.log('targets: list ≥ 2000 requests/s with p99 ≤ 50 ms');
  } finally {
    await c.close();
  }
}
