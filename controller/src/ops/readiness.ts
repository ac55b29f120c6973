/**
 * Readiness of one controller replica: whether a load balancer should send it traffic. Ready
 * means the database answers, every migration on disk is applied, the job transport's NATS
 * connection answers a ping (when NATS_URL is set) and the replica is not shutting down.
 * Every answer is safe to show without authentication: no URL credentials, no secrets.
 */
import type { NatsConnection } from 'nats';
import { pingNats, type CheckResult } from '../../../shared/src/ops/nats-health';
import { redactUrls } from '../../../shared/src/ops/redact';
import type { Db } from '../db/knex';
import { pendingMigrations } from '../db/migrate';

const CHECK_TIMEOUT_MS = 2_000;

export interface Check extends CheckResult {
  /** Set when the check does not apply (e.g. no NATS_URL: agents are reached in-process). */
  skipped?: string;
}

export interface ReadinessReport {
  ready: boolean;
  /** The failing parts in words, e.g. "database: connect ECONNREFUSED 127.0.0.1:5432". */
  failing: string[];
  checks: { database: Check; migrations: Check; nats: Check; shutdown: Check };
}

export interface ReadinessDeps {
  db: Db;
  natsConfigured: boolean;
  nats: () => NatsConnection | undefined;
  draining: () => boolean;
}

const clean = (err: unknown) =>
  redactUrls(String((err as Error)?.message ?? err))
    .replace(/\s+/g, ' ')
    .slice(0, 300);

function timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export class Readiness {
  /** Once every migration is applied it stays so for the life of the process. */
  private migrated = false;

  constructor(private readonly deps: ReadinessDeps) {}

  private async database(): Promise<Check> {
    const start = Date.now();
    try {
      await timeout(this.deps.db.raw('SELECT 1'), CHECK_TIMEOUT_MS, 'the database');
      return { ok: true, latency_ms: Date.now() - start };
    } catch (err) {
      return { ok: false, error: clean(err) };
    }
  }

  private async migrations(databaseOk: boolean): Promise<Check> {
    if (this.migrated) return { ok: true };
    if (!databaseOk) return { ok: false, error: 'unknown while the database is unreachable' };
    try {
      const pending = await timeout(pendingMigrations(this.deps.db), CHECK_TIMEOUT_MS, 'the migrations table');
      if (pending.length === 0) {
        this.migrated = true;
        return { ok: true };
      }
      const names = pending.slice(0, 5).join(', ') + (pending.length > 5 ? ', …' : '');
      return { ok: false, error: `${pending.length} migration(s) not applied: ${names} (run npm run migrate or restart a controller)` };
    } catch (err) {
      return { ok: false, error: clean(err) };
    }
  }

  private async nats(): Promise<Check> {
    if (!this.deps.natsConfigured) return { ok: true, skipped: 'NATS_URL is not set: agents are reached in-process' };
    const result = await pingNats(this.deps.nats(), CHECK_TIMEOUT_MS);
    return result.ok ? result : { ok: false, error: clean(result.error) };
  }

  async check(): Promise<ReadinessReport> {
    const [database, nats] = await Promise.all([this.database(), this.nats()]);
    const migrations = await this.migrations(database.ok);
    const shutdown: Check = this.deps.draining() ? { ok: false, error: 'this replica is shutting down' } : { ok: true };
    const checks = { database, migrations, nats, shutdown };
    const failing = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([name, c]) => `${name}: ${c.error}`);
    return { ready: failing.length === 0, failing, checks };
  }
}
