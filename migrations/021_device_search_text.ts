import type { Knex } from 'knex';

/**
 * GET /api/devices?q= searched lower(name || host || …) computed per row; on 10,000 devices a
 * broad q (thousands of matches) spent most of its time re-computing that text for the count.
 * A stored generated column holds it once, and the trigram index moves onto the column.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS devices_search_trgm');
  await knex.raw(`ALTER TABLE devices ADD COLUMN search_text text GENERATED ALWAYS AS
    (lower(name || ' ' || host || ' ' || manufacturer || ' ' || model || ' ' || platform || ' ' || device_type)) STORED`);
  const { rows } = await knex.raw("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'");
  if (rows.length > 0) await knex.raw('CREATE INDEX devices_search_text_trgm ON devices USING gin (search_text gin_trgm_ops)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS devices_search_text_trgm');
  await knex.raw('ALTER TABLE devices DROP COLUMN IF EXISTS search_text');
}
