import type { Knex } from 'knex';

/** What each agent last reported about its NATS and controller connections (heartbeat `health`). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.jsonb('health');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('health');
  });
}
