import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// Return BIGINT counts as numbers and keep timestamps as Date (serialized as ISO 8601 UTC).
pg.types.setTypeParser(20, (value) => Number(value));

export type Db = Knex;

/**
 * `.options(PREPARED)` on a hot query (one run on most requests) makes it a named prepared
 * statement: each connection parses and plans its text once, which cuts PostgreSQL's CPU for a
 * short query by about three quarters. Opt-in, because every distinct text stays prepared on
 * every pooled connection: mark only queries whose text comes from a small, fixed set.
 */
export const PREPARED = { prepared: true } as const;

type QueryObject = { sql: string; options?: Record<string, unknown> };

const statementNames = new Map<string, string>();

/** A prepared statement's name: from its text, so equal texts share one statement and different texts never collide. */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) statementNames.set(sql, (name = `sb_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`));
  return name;
}

/** Names PREPARED queries (see statementName). */
function namePreparedStatements(db: Knex): void {
  const client = db.client as { _query(connection: unknown, obj: QueryObject): Promise<unknown> };
  const query = client._query.bind(client);
  client._query = (connection, obj) => {
    if (obj.options?.prepared) {
      const name = statementName(obj.sql);
      const { prepared: _, ...options } = obj.options;
      obj = { ...obj, options: { ...options, name } };
    }
    return query(connection, obj);
  };
}

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<void>;
}

/** Databases reached through pg (not PGlite), whose pooled connections hotQuery may use directly. */
const pgDatabases = new WeakSet<Db>();
/** The text form of PostgreSQL's uuid: a value that fails it would fail a whole batch's cast, so it is checked first. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `?` placeholders → `$1`, `$2`, … (pg's form), once per text. */
const pgTexts = new Map<string, string>();

/**
 * Rows of a query run on most requests (the session check, the device list version): constant
 * SQL with `?` placeholders (and no other `?` in it), run as a named prepared statement directly
 * on a pooled pg connection. Skips knex's builder, compiler, binding rewrite and runner, which
 * cost about 60 µs of node CPU per query, a tenth of a short request. Through knex on PGlite.
 */
export async function hotQuery<T>(db: Db, sql: string, values: unknown[]): Promise<T[]> {
  if (!pgDatabases.has(db)) return (await db.raw(sql, values as Knex.RawBinding[])).rows as T[];
  let text = pgTexts.get(sql);
  if (text === undefined) {
    let n = 0;
    pgTexts.set(sql, (text = sql.replace(/\?/g, () => `$${++n}`)));
  }
  const client = db.client as PooledClient;
  const connection = await client.acquireConnection();
  try {
    return (await connection.query({ name: statementName(text), text, values })).rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}

interface PgLiteResult {
  rows?: unknown[];
  affectedRows?: number;
}
type PgLiteQuery = { method?: string; response: PgLiteResult };
type PgLiteClientClass = new (config: Knex.Config) => { processResponse(obj: PgLiteQuery, runner: unknown): unknown };

/**
 * knex-pglite derives the statement kind from knex's method name, and knex calls a delete `del`:
 * a delete answered the whole result object where pg answers the count of deleted rows, so every
 * `if (deleted === 0) → 404` passed on PGlite. Raw statements answered rowCount 0 for a SELECT
 * where pg counts the rows. Both now answer what pg answers, for every store at once.
 */
function withPgCounts(Base: PgLiteClientClass): typeof knexFactory.Client {
  class PgLiteWithPgCounts extends Base {
    override processResponse(obj: PgLiteQuery, runner: unknown): unknown {
      if (obj.method === 'del') obj = { ...obj, method: 'delete' };
      if (obj.method === 'raw' && obj.response) {
        const { rows = [], affectedRows = 0 } = obj.response;
        obj = { ...obj, response: { ...obj.response, affectedRows: affectedRows || rows.length } };
      }
      return super.processResponse(obj, runner);
    }
  }
  return PgLiteWithPgCounts as unknown as typeof knexFactory.Client;
}

/** DATABASE_URL → PostgreSQL through pg; none → embedded PostgreSQL (PGlite) under the data dir. */
export async function createDb(databaseUrl: string | null, dataDir: string): Promise<Db> {
  if (databaseUrl) {
    const db = knexFactory({
      client: 'pg',
      connection: databaseUrl,
      pool: { min: 0, max: 20 },
      log: {
        // A failed connection also rejects the query that wanted it, which reports it once;
        // knex's own console copy (with a stack) would only bury that one clear line.
        warn: (message: string) => {
          if (!String(message).startsWith('Acquire connection error')) console.warn(message);
        },
      },
    });
    namePreparedStatements(db);
    pgDatabases.add(db);
    return db;
  }
  const { default: ClientPgLite } = await import('knex-pglite');
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  return knexFactory({
    client: withPgCounts(ClientPgLite as unknown as PgLiteClientClass),
    dialect: 'postgres',
    connection: { connectionString: `file://${dir}` },
  } as Knex.Config);
}
