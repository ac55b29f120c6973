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

/** Names a PREPARED query after its text, so equal texts share one statement and different texts never collide. */
function namePreparedStatements(db: Knex): void {
  const client = db.client as { _query(connection: unknown, obj: QueryObject): Promise<unknown> };
  const query = client._query.bind(client);
  const names = new Map<string, string>();
  client._query = (connection, obj) => {
    if (obj.options?.prepared) {
      let name = names.get(obj.sql);
      if (!name) names.set(obj.sql, (name = `sb_${createHash('sha1').update(obj.sql).digest('hex').slice(0, 20)}`));
      const { prepared: _, ...options } = obj.options;
      obj = { ...obj, options: { ...options, name } };
    }
    return query(connection, obj);
  };
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
    return db;
  }
  const { default: ClientPgLite } = await import('knex-pglite');
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  return knexFactory({
    client: ClientPgLite as unknown as typeof knexFactory.Client,
    dialect: 'postgres',
    connection: { connectionString: `file://${dir}` },
  } as Knex.Config);
}
