import type { Knex } from 'knex';

/**
 * The failed-login lockout also counts per username, from any address (a guesser spreading
 * over many addresses still locks the account). Usernames compare case-insensitively.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX failed_logins_username_created_at ON failed_logins (lower(username), created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS failed_logins_username_created_at');
}
