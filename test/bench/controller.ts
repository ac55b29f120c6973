import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SettingsService } from '../../controller/src/platform/settings-service';
import { SettingsStore } from '../../controller/src/platform/settings-store';
import { buildApp } from '../../controller/src/app';
import { bootstrap } from '../../controller/src/bootstrap';
import type { ControllerConfig } from '../../controller/src/config';
import { createDb } from '../../controller/src/db/knex';
import { createLogger } from '../../controller/src/logger';
import { SecretBox } from '../../shared/src/crypto/secret-box';
import { ADMIN } from '../helpers/controller';
import setupTemplate from '../helpers/global-setup';
import { seedPgliteDataDir } from '../helpers/pglite';
import { createTestDatabase } from '../helpers/postgres';

/** `--name N` from a benchmark's arguments: a whole number above 0, or the fallback. */
export function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a whole number above 0`);
  return value;
}

export interface BenchControllerOptions {
  /** Settings applied before the app starts (e.g. raised rate limits). */
  settings?: Record<string, unknown>;
  /** Marks this run's backends in pg_stat_activity. */
  applicationName?: string;
  /** The embedded database of `npm start` (PGlite in the data dir, in this process) instead of PostgreSQL. */
  embedded?: boolean;
}

/**
 * A controller on a fresh database in this process, with a signed-in admin; close() drops it all.
 * `call` sends as that admin; `request` sends with any token and answers parsed JSON.
 */
export async function benchController(extra: Partial<ControllerConfig> = {}, options: BenchControllerOptions = {}) {
  await setupTemplate();
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  if (options.embedded) await seedPgliteDataDir(dataDir);
  const database = options.embedded ? { url: null, drop: async () => {} } : await createTestDatabase();
  const databaseUrl = database.url && options.applicationName ? withApplicationName(database.url, options.applicationName) : database.url;
  const config: ControllerConfig = {
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    natsUrl: null,
    dataDir,
    adminUsername: ADMIN.username,
    adminPassword: ADMIN.password,
    secretKey: randomBytes(32),
    logLevel: 'warn',
    publicUrl: 'http://127.0.0.1:0',
    tls: false,
    ...extra,
  };
  const log = createLogger('warn');
  const db = await createDb(config.databaseUrl, dataDir);
  // BENCH_SQL_COUNT=1: counts the statements the controller sent through knex and prints the busiest at close.
  const statements = new Map<string, number>();
  if (process.env.BENCH_SQL_COUNT) db.on('query', (q: { sql: string }) => statements.set(q.sql, (statements.get(q.sql) ?? 0) + 1));
  await bootstrap(db, ADMIN, log);
  if (options.settings) await new SettingsService(new SettingsStore(db), new SecretBox(config.secretKey)).update('global', options.settings, true);
  const app = await buildApp({ config, db, log });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  // node:http with kept-alive sockets, not fetch: the client shares this process with the
  // controller, and fetch took about three times the CPU per call (0.21 against 0.07 ms, server included).
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const send = (method: string, path: string, token: string | null, body?: unknown, type = 'application/json') =>
    new Promise<{ text: string; json: boolean }>((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers = { ...(token && { authorization: `Bearer ${token}` }), ...(payload !== undefined && { 'content-type': type }) };
      const req = httpRequest(base + path, { method, headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) reject(new Error(`${method} ${path} → ${status} ${text.slice(0, 500)}`));
          else resolve({ text, json: res.headers['content-type']?.includes('json') ?? false });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  const request = async (method: string, path: string, token: string | null, body?: unknown, type?: string) => {
    const { text } = await send(method, path, token, body, type);
    return text ? JSON.parse(text) : null;
  };
  let token: string | null = null;
  const call = async (method: string, path: string, body?: unknown, type?: string) => {
    const { text, json } = await send(method, path, token, body, type);
    return { body: text && json ? JSON.parse(text) : text, bytes: text.length };
  };
  token = (await call('POST', '/api/auth/login', ADMIN)).body.access_token;
  return {
    app,
    db,
    base,
    call,
    request,
    config,
    log,
    statementTimes: await statementTimes(db, options.embedded === true),
    async close() {
      if (statements.size > 0) {
        console.log('statements sent through knex (count, first 160 characters):');
        for (const [sql, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 25))
          console.log(`${String(n).padStart(7)}  ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
      }
      agent.destroy();
      await app.close();
      await db.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * BENCH_PG_STATEMENTS=1: PostgreSQL's own time per statement over a timed run, from
 * pg_stat_statements (the server must preload it: `shared_preload_libraries = pg_stat_statements`).
 * `around(run)` resets the counts of this database, runs, and prints its busiest statements with
 * calls, rows and milliseconds (BENCH_PG_STATEMENTS=calls: the most called); the floors that follow
 * are left out. Unset, it only runs.
 */
async function statementTimes(db: Awaited<ReturnType<typeof createDb>>, embedded: boolean) {
  const on = Boolean(process.env.BENCH_PG_STATEMENTS) && !embedded;
  if (on) await db.raw('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const thisDatabase = '(SELECT oid FROM pg_database WHERE datname = current_database())';
  return {
    async around<T>(label: string, run: () => Promise<T>): Promise<T> {
      if (!on) return run();
      await db.raw(`SELECT pg_stat_statements_reset(0, ${thisDatabase}, 0)`);
      const result = await run();
      const { rows } = await db.raw(
        `SELECT calls::int, rows::int, round((total_exec_time + total_plan_time)::numeric, 1)::float AS ms,
                round(total_plan_time::numeric, 1)::float AS plan_ms, query FROM pg_stat_statements
          WHERE dbid = ${thisDatabase} ORDER BY ${process.env.BENCH_PG_STATEMENTS === 'calls' ? 'calls' : 'total_exec_time + total_plan_time'} DESC`,
      );
      type Row = { calls: number; rows: number; ms: number; plan_ms: number; query: string };
      const total = (rows as Row[]).reduce((sum, r) => ({ ms: sum.ms + r.ms, plan: sum.plan + r.plan_ms, calls: sum.calls + r.calls }), {
        ms: 0,
        plan: 0,
        calls: 0,
      });
      const order = process.env.BENCH_PG_STATEMENTS === 'calls' ? 'most called' : 'busiest';
      // Planning counts only where the server tracks it (pg_stat_statements.track_planning = on).
      const planning = total.plan > 0 ? `, planning ${total.plan.toFixed(0)} ms of it` : '';
      console.log(`  PostgreSQL time of ${label}: ${total.ms.toFixed(0)} ms in ${total.calls} statements${planning}; ${order}:`);
      for (const r of (rows as Row[]).slice(0, order === 'busiest' ? 15 : 30)) {
        const plan = `(plan ${String(r.plan_ms).padStart(6)})`;
        const figures = `${String(r.ms).padStart(8)} ms ${plan} ${String(r.calls).padStart(6)} calls ${String(r.rows).padStart(6)} rows`;
        console.log(`    ${figures}  ${r.query.replace(/\s+/g, ' ').slice(0, 110)}`);
      }
      return result;
    },
  };
}

/** The URL with application_name set, beside the parameters it may have already (the Unix socket's host=…). */
function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}
