import type { Knex } from 'knex';

/**
 * The values of a deployment entry's secret variables that its rendered config holds (null when
 * none). Its jobs carry them so that the agent masks them, as it masks the device's credentials,
 * in every line and error it reports: a device refusing a line quotes it, secret and all, into
 * the deployment log, the device's error and the live stream.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deployment_entries ADD COLUMN secrets jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deployment_entries DROP COLUMN secrets');
}
