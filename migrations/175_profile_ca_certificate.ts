import type { Knex } from 'knex';

/**
 * A connection profile may name the private CA its devices' TLS certificates are signed by
 * (PEM, one or more certificates). The gNMI sessions of its devices trust that CA instead of the
 * agent process's roots, so no process-wide variable (NODE_EXTRA_CA_CERTS,
 * GRPC_DEFAULT_SSL_ROOTS_FILE_PATH) has to be set on the agents. A certificate is not a secret.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connection_profiles', (t) => {
    t.text('ca_certificate').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connection_profiles', (t) => {
    t.dropColumn('ca_certificate');
  });
}
