import type { Knex } from 'knex';

/**
 * SSH user certificates issued on /login, so ending a session can revoke its certificate: the
 * key revocation list (GET /api/auth/ssh/krl) lists the serials of revoked certificates that
 * have not expired yet. Rows outlive a deleted session or user (SET NULL) so a revoked
 * certificate stays listed until it expires. Rows a day past their expiry are deleted at the next
 * issue (ssh-certificates.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ssh_certificates', (t) => {
    // The certificate serial, a nonzero unsigned 64-bit number as 16 hex digits.
    t.string('serial', 16).primary();
    t.uuid('user_id').references('users.id').onDelete('SET NULL');
    t.uuid('session_id').references('sessions.id').onDelete('SET NULL');
    t.text('key_id').notNullable();
    t.timestamp('valid_until', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['session_id']);
    t.index(['valid_until']); // the KRL reads unexpired rows; expired ones are purged
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ssh_certificates');
}
