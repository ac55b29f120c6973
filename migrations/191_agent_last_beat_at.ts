import type { Knex } from 'knex';

/**
 * The signed time of the last heartbeat taken from each agent. A heartbeat is taken only when its
 * time is later (checked in the statement that records it), so a copy sent again on a NATS without
 * per-agent accounts cannot keep a dead agent online: not on another controller, not after a restart.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents ADD COLUMN last_beat_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents DROP COLUMN last_beat_at');
}
