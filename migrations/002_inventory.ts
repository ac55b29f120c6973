import type { Knex } from 'knex';

/** Sites, connection profiles and devices: the inventory every other area builds on. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sites', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('location').notNullable().defaultTo('');
    t.uuid('parent_site_id').references('sites.id').onDelete('RESTRICT');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('connection_profiles', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('username').notNullable().defaultTo('');
    // Secrets: compact JWE (dir, A256GCM) under the master key; never returned.
    t.text('password_enc');
    t.text('private_key_enc');
    t.text('enable_password_enc');
    t.integer('ssh_port').notNullable().defaultTo(22);
    t.integer('netconf_port').notNullable().defaultTo(830);
    t.integer('gnmi_port').notNullable().defaultTo(9339);
    t.boolean('gnmi_tls').notNullable().defaultTo(false);
    t.boolean('gnmi_skip_verify').notNullable().defaultTo(false);
    t.text('automation_transport');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'name']);
  });

  await knex.schema.createTable('devices', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('host').notNullable();
    t.text('device_type').notNullable();
    t.text('manufacturer').notNullable().defaultTo('');
    t.text('model').notNullable().defaultTo('');
    t.text('platform').notNullable().defaultTo('');
    t.text('site').notNullable().defaultTo('');
    t.uuid('site_id').references('sites.id').onDelete('RESTRICT');
    t.text('source').notNullable().defaultTo('manual');
    t.uuid('source_id');
    t.text('external_id');
    t.uuid('profile_id').notNullable().references('connection_profiles.id').onDelete('RESTRICT');
    t.text('protocol').notNullable().defaultTo('ssh');
    t.text('description').notNullable().defaultTo('');
    t.text('serial_number').notNullable().defaultTo('');
    t.text('asset_tag').notNullable().defaultTo('');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.boolean('poll_enabled').notNullable().defaultTo(false);
    t.integer('poll_interval_minutes');
    t.uuid('created_by');
    t.uuid('updated_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'name']);
    t.index(['org_id', 'site_id']);
    t.index(['profile_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['devices', 'connection_profiles', 'sites']) await knex.schema.dropTableIfExists(table);
}
