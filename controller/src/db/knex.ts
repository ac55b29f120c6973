import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// Return BIGINT counts as numbers and keep timestamps as Date (serialized as ISO 8601 UTC).
pg.types.setTypeParser(20, (value) => Number(value));

export type Db = Knex;

/** DATABASE_URL → PostgreSQL through pg; none → embedded PostgreSQL (PGlite) under the data dir. */
export async function createDb(databaseUrl: string | null, dataDir: string): Promise<Db> {
  if (databaseUrl) {
    return knexFactory({
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
