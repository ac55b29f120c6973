import type { Knex } from 'knex';

/** Organizations, users, sessions and refresh tokens, settings, audit log, failed logins. */
export async function up(knex: Knex): Promise<void> {
  // gen_random_uuid() is built into PostgreSQL 13+ and PGlite. (This once tried CREATE EXTENSION
  // pgcrypto and ignored a refusal, but a refused statement aborts the migration's transaction, so
  // PGlite, which has no pgcrypto, could never start; removing it changes nothing where it ran.)

  await knex.schema.createTable('organizations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('home_org_id').notNullable().references('organizations.id').onDelete('RESTRICT');
    t.text('username').notNullable();
    t.text('email').notNullable().defaultTo('');
    t.text('display_name').notNullable().defaultTo('');
    t.text('password_hash');
    t.text('auth_provider').notNullable().defaultTo('local');
    t.text('external_id');
    t.specificType('roles', 'text[]').notNullable().defaultTo('{}');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_platform_admin').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX users_username_lower ON users (lower(username))');

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('client_type').notNullable().defaultTo('admin_ui');
    t.text('user_agent').notNullable().defaultTo('');
    t.text('ip_address').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_reason');
    t.index(['user_id']);
  });

  await knex.schema.createTable('refresh_tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('session_id').notNullable().references('sessions.id').onDelete('CASCADE');
    t.text('token_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['session_id']);
  });

  // scope is 'global' or an organization id; org values override global ones.
  await knex.schema.createTable('settings', (t) => {
    t.text('scope').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['scope', 'key']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('seq').primary();
    t.uuid('id').notNullable().unique().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id');
    t.uuid('user_id');
    t.text('username');
    t.text('kind').notNullable();
    t.text('ip_address');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'created_at']);
    t.index(['kind']);
  });

  // Kept in the database so a lockout holds across restarts and controller replicas.
  await knex.schema.createTable('failed_logins', (t) => {
    t.bigIncrements('id').primary();
    t.text('ip_address').notNullable();
    t.text('username');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['ip_address', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['failed_logins', 'audit_log', 'settings', 'refresh_tokens', 'sessions', 'users', 'organizations']) {
    await knex.schema.dropTableIfExists(table);
  }
}
