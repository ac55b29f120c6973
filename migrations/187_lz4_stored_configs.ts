import type { Knex } from 'knex';

/**
 * Discovery records are the large values written on every poll, compressed with pglz by default.
 * lz4 writes them about five times faster (measured on configs: 80 KB 0.50 → 0.10 ms of
 * PostgreSQL CPU, 8 KB 60 → 17 µs) for about a fifth more space. Config texts and transcripts
 * have used lz4 since migration 135; this one only adds the records, the same way. Only on a
 * server built with lz4 (Debian's PostgreSQL is; PGlite is not, and keeps pglz). A column's
 * compression applies to the values written after it, so no table is rewritten.
 */
async function setCompression(knex: Knex, method: 'lz4' | 'pglz'): Promise<void> {
  await knex.raw(`DO $$ BEGIN
    ALTER TABLE discovery_sections ALTER COLUMN records SET COMPRESSION ${method};
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'discovery_sections keeps pglz: this server has no ${method}';
  END $$`);
}

export const up = (knex: Knex) => setCompression(knex, 'lz4');
export const down = (knex: Knex) => setCompression(knex, 'pglz');
