import type { Knex } from 'knex';

/**
 * Dry runs: a deployment started with dry_run computes each device's diff without changing it
 * and ends in dry_run_completed or dry_run_failed (never completed or failed, so it can never be
 * rolled back or mistaken for a change). Each device keeps its unified diff.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deployments', (t) => {
    t.boolean('dry_run').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('deployment_devices', (t) => {
    t.text('dry_run_diff');
  });
  await knex.raw('ALTER TABLE deployments DROP CONSTRAINT deployments_status_check');
  await knex.raw(`ALTER TABLE deployments ADD CONSTRAINT deployments_status_check
    CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'rolling_back', 'rolled_back', 'dry_run_completed', 'dry_run_failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deployments DROP CONSTRAINT deployments_status_check');
  await knex.raw(`ALTER TABLE deployments ADD CONSTRAINT deployments_status_check
    CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'rolling_back', 'rolled_back'))`);
  await knex.schema.alterTable('deployment_devices', (t) => t.dropColumn('dry_run_diff'));
  await knex.schema.alterTable('deployments', (t) => t.dropColumn('dry_run'));
}
