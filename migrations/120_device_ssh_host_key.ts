import type { Knex } from 'knex';

/**
 * Trust on first use for device SSH host keys: the first key an agent reports for a device is
 * pinned here (in the transaction that records the job outcome), every later job carries it and
 * the agent's SSH and NETCONF sessions refuse any other key before authenticating. Clearing the
 * columns (DELETE /api/devices/:id/ssh-host-key) lets the next session learn the key again.
 * None of these columns is listed by GET /api/devices, so writing them leaves the list version alone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.text('ssh_host_key_sha256').nullable();
    t.text('ssh_host_key_type').nullable();
    t.timestamp('ssh_host_key_seen_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.dropColumn('ssh_host_key_sha256');
    t.dropColumn('ssh_host_key_type');
    t.dropColumn('ssh_host_key_seen_at');
  });
}
