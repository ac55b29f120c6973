import type { Knex } from 'knex';

/**
 * Inventory additions on top of 002: NetBox sources and sync history, the NetBox columns of a
 * device, and the indexes behind GET /api/devices filters and free-text search (pg_trgm).
 *
 * The search expression below must stay byte-identical to DEVICE_SEARCH_EXPRESSION in
 * controller/src/devices/store.ts, or the planner will not use the trigram index.
 */
const SEARCH = "lower(name || ' ' || host || ' ' || manufacturer || ' ' || model || ' ' || platform || ' ' || device_type)";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('netbox_sources', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('url').notNullable();
    // Compact JWE under the master key; never returned.
    t.text('token_enc').notNullable();
    t.jsonb('device_filters').notNullable().defaultTo('{}');
    t.boolean('verify_ssl').notNullable().defaultTo(true);
    t.uuid('profile_id').references('connection_profiles.id').onDelete('SET NULL');
    t.text('default_device_type').notNullable().defaultTo('generic');
    t.jsonb('platform_map').notNullable().defaultTo('{}');
    t.boolean('delete_missing').notNullable().defaultTo(false);
    t.integer('timeout_seconds').notNullable().defaultTo(30);
    t.timestamp('last_sync_at', { useTz: true });
    t.text('last_sync_status');
    t.uuid('created_by');
    t.uuid('updated_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('netbox_sync_runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('source_id').references('netbox_sources.id').onDelete('SET NULL');
    t.text('source_name').notNullable();
    t.text('status').notNullable();
    t.integer('added').notNullable().defaultTo(0);
    t.integer('updated').notNullable().defaultTo(0);
    t.integer('unchanged').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.integer('removed').notNullable().defaultTo(0);
    t.jsonb('errors').notNullable().defaultTo('[]');
    t.integer('duration_ms').notNullable().defaultTo(0);
    t.uuid('triggered_by');
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('finished_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'started_at']);
  });

  // devices.source_id / external_id (from 002) hold the NetBox source and NetBox device id.
  await knex.schema.alterTable('devices', (t) => {
    t.timestamp('netbox_last_synced_at', { useTz: true });
    t.timestamp('netbox_removed_at', { useTz: true });
    t.foreign('source_id').references('netbox_sources.id').onDelete('SET NULL');
    t.index(['source_id', 'external_id']);
  });

  await knex.raw('CREATE INDEX devices_org_manufacturer_lower ON devices (org_id, lower(manufacturer))');
  await knex.raw('CREATE INDEX devices_org_platform ON devices (org_id, platform)');
  await knex.raw('CREATE INDEX devices_org_device_type ON devices (org_id, device_type)');
  await knex.raw('CREATE INDEX devices_org_source ON devices (org_id, source)');
  await knex.raw('CREATE INDEX devices_org_site_lower ON devices (org_id, lower(site))');

  // Trigram index for q; optional where the extension is missing (the embedded PGlite build).
  if (await tryExtension(knex, 'pg_trgm')) {
    await knex.raw(`CREATE INDEX devices_search_trgm ON devices USING gin ((${SEARCH}) gin_trgm_ops)`);
  }
}

/** CREATE EXTENSION inside a savepoint, so a refusal does not abort the migration's transaction. */
async function tryExtension(knex: Knex, name: string): Promise<boolean> {
  const [{ count }] = (await knex.raw('SELECT count(*)::int AS count FROM pg_available_extensions WHERE name = ?', [name])).rows;
  if (count === 0) return false;
  try {
    await knex.transaction(async (savepoint) => {
      await savepoint.raw(`CREATE EXTENSION IF NOT EXISTS ${name}`);
    });
    return true;
  } catch {
    return false;
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const index of [
    'devices_search_trgm',
    'devices_org_manufacturer_lower',
    'devices_org_platform',
    'devices_org_device_type',
    'devices_org_source',
    'devices_org_site_lower',
  ]) {
    await knex.raw(`DROP INDEX IF EXISTS ${index}`);
  }
  await knex.schema.alterTable('devices', (t) => {
    t.dropForeign(['source_id']);
    t.dropIndex(['source_id', 'external_id']);
    t.dropColumn('netbox_last_synced_at');
    t.dropColumn('netbox_removed_at');
  });
  await knex.schema.dropTableIfExists('netbox_sync_runs');
  await knex.schema.dropTableIfExists('netbox_sources');
}
