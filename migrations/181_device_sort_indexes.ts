import type { Knex } from 'knex';

/**
 * GET /api/devices?sort=host|model (controller/src/devices/list-order.ts): a page in host or model
 * order is read from these indexes, as name, vendor, type, site and source pages are
 * from the indexes of migrations 002 and 020, instead of sorting all of an organization's devices.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX devices_org_host ON devices (org_id, host)');
  await knex.raw('CREATE INDEX devices_org_model ON devices (org_id, model)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS devices_org_host');
  await knex.raw('DROP INDEX IF EXISTS devices_org_model');
}
