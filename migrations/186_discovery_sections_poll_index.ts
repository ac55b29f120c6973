import type { Knex } from 'knex';

/**
 * discovery_sections.poll_id references the poll that collected a section, ON DELETE CASCADE,
 * but nothing indexed it: every deleted poll (the hourly history prune, a device's deletion with
 * its history) ran the cascade as a sequential scan of every device's sections, one per poll.
 * Measured on 1,000 devices: 1,000 pruned polls scanned 6,000 section rows each (46 ms); the work
 * grows with polls × sections, so a fleet of 10,000 devices scans 60,000 rows per pruned poll. The
 * index also answers the prune's own "no section still holds this poll" check.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX discovery_sections_poll_id_index ON discovery_sections (poll_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS discovery_sections_poll_id_index');
}
