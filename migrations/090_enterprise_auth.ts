import type { Knex } from 'knex';

/**
 * Enterprise sign-in. OIDC authorization requests live in the database (not in memory) so the
 * callback can land on any controller replica; each row is used once and expires. OIDC users
 * are found again by their provider identity (users.external_id = issuer + subject); LDAP users
 * by username (their external_id is the last DN seen, for information).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_auth_requests', (t) => {
    // SHA-256 of the state parameter: the row proves we issued it without storing it.
    t.text('state_hash').primary();
    t.text('code_verifier').notNullable();
    t.text('nonce').notNullable();
    t.text('redirect_uri').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
  await knex.raw("CREATE UNIQUE INDEX users_oidc_external_id ON users (external_id) WHERE auth_provider = 'oidc'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS users_oidc_external_id');
  await knex.schema.dropTableIfExists('oidc_auth_requests');
}
