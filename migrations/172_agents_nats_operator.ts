import type { Knex } from 'knex';

/**
 * NATS operator mode and installation namespaces. An agent's NATS user public key (its seed never
 * leaves the agent) so its credentials can be renewed and revoked. One `installation` row gives
 * the installation its NATS subject prefix, so two installations sharing a NATS server never take
 * each other's jobs; the row is written at the first start (see controller/src/agents/installation.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.text('nats_public_key').nullable();
  });
  await knex.schema.createTable('installation', (t) => {
    t.integer('singleton').primary().defaultTo(1).checkIn(['1']);
    t.text('nats_prefix').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('installation');
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('nats_public_key');
  });
}
