import type { Knex } from 'knex';

/**
 * Trust on first use for the gNMI server's TLS certificate, beside the SSH host key of 120: the
 * first certificate an agent reports for a device is pinned here (in the transaction that records
 * the job outcome), every later job carries its SHA-256 and the agent's gNMI sessions refuse any
 * other certificate before an RPC carries credentials, gnmi_skip_verify or not. Clearing the
 * columns (DELETE /api/devices/:id/gnmi-certificate) lets the next session learn it again.
 * None of these columns is listed by GET /api/devices, so writing them leaves the list version alone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.text('gnmi_cert_sha256').nullable();
    t.text('gnmi_cert_subject').nullable();
    t.timestamp('gnmi_cert_not_after', { useTz: true }).nullable();
    t.timestamp('gnmi_cert_seen_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    t.dropColumn('gnmi_cert_sha256');
    t.dropColumn('gnmi_cert_subject');
    t.dropColumn('gnmi_cert_not_after');
    t.dropColumn('gnmi_cert_seen_at');
  });
}
