import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** The machine's PostgreSQL (CI starts it) over TCP; tests never touch its other databases. */
const TCP_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
/** The same server over its Unix socket (Debian's socket directory): no TCP stack per statement. */
const SOCKET_ADMIN_URL = 'postgres://postgres@localhost/postgres?host=/var/run/postgresql';

/** SWITCHBOARD_TEST_PG (usePostgresSocket() may have set it), else TCP. */
const adminUrl = () => process.env.SWITCHBOARD_TEST_PG ?? TCP_ADMIN_URL;

/**
 * Points SWITCHBOARD_TEST_PG at the machine's PostgreSQL over its Unix socket when that answers
 * (and nothing else was asked for): the suite and the benchmarks then pay no loopback TCP per
 * statement, as a controller beside its database would not (docs/configuration.md). Called before
 * the test workers and benchmark processes start, so they inherit the variable.
 */
export async function usePostgresSocket(): Promise<void> {
  if (process.env.SWITCHBOARD_TEST_PG) return;
  const client = new pg.Client({ connectionString: SOCKET_ADMIN_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    process.env.SWITCHBOARD_TEST_PG = SOCKET_ADMIN_URL;
  } catch {
    // No socket there, or it refuses this user (peer authentication): TCP it is.
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Template name changes whenever a migration changes, so a stale template is never reused. */
export function templateName(): string {
  const dir = join(import.meta.dirname, '../../migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  return `sb_tpl_${hash.digest('hex').slice(0, 16)}`;
}

/** A fresh database per test file, cloned from the migrated template in milliseconds. */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `sb_t_${randomBytes(6).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${templateName()}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
