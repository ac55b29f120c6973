import type { Knex } from 'knex';

/**
 * Snapshot runs are closed by checking "is any device still pending?" after each device
 * records; this partial index makes that an index probe however large the run is.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX snapshot_devices_pending ON snapshot_devices (snapshot_id) WHERE status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS snapshot_devices_pending');
}
