import type { Knex } from 'knex';

/**
 * Config texts and transcripts are compressed with LZ4 instead of PostgreSQL's default pglz
 * when they are stored out of line: about half the server CPU per stored backup, at a slightly
 * larger size. Only new values use it (existing ones stay pglz and read back as before). The
 * embedded database (PGlite) is built without LZ4 and keeps pglz.
 */
const COLUMNS = ['config_text', 'transcript'];

async function setCompression(knex: Knex, method: 'lz4' | 'pglz'): Promise<void> {
  const alter = COLUMNS.map((c) => `ALTER COLUMN ${c} SET COMPRESSION ${method}`).join(', ');
  await knex.raw(`DO $$ BEGIN
    ALTER TABLE config_versions ${alter};
  EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'config_versions keeps pglz: this server has no ${method}';
  END $$`);
}

export async function up(knex: Knex): Promise<void> {
  await setCompression(knex, 'lz4');
}

export async function down(knex: Knex): Promise<void> {
  await setCompression(knex, 'pglz');
}
