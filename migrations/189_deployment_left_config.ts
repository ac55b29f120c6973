import type { Knex } from 'knex';

/**
 * What a deployment left on each device, so that a restore or rollback never silently undoes a
 * later change: `left_sha256` is the SHA-256 of the running config its deploy's verify read (the
 * rollback job refuses to push the backup when the device no longer has it), and
 * `rollback_force` is set by `POST /rollback {"force": true}` to push the backups anyway.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deployment_devices ADD COLUMN left_sha256 text');
  await knex.raw('ALTER TABLE deployments ADD COLUMN rollback_force boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deployments DROP COLUMN rollback_force');
  await knex.raw('ALTER TABLE deployment_devices DROP COLUMN left_sha256');
}
