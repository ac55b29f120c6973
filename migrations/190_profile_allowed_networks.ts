import type { Knex } from 'knex';

/**
 * A connection profile may name the networks its credentials may be sent to (allowed_networks:
 * normalized CIDR text, IPv4 and IPv6). Empty, the default, limits nothing, as before. The
 * controller refuses devices whose IP-literal host is outside; the agent checks every address it
 * is about to connect to (after DNS) and refuses to open a session outside them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE connection_profiles ADD COLUMN allowed_networks text[] NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE connection_profiles DROP COLUMN allowed_networks');
}
