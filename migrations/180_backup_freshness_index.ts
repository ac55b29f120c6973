import type { Knex } from 'knex';

/**
 * Backup freshness (GET /api/sites/health: devices with a successful backup in the last 24 h)
 * asks, for every device, whether it has a successful config version since a moment. Without
 * this index each probe read every version of the device through (device_id, version); with it,
 * one index probe per device however long its history.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX config_versions_device_success_created ON config_versions (device_id, created_at) WHERE status = 'success'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS config_versions_device_success_created');
}
