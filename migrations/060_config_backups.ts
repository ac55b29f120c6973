import type { Knex } from 'knex';

/**
 * Config backups and snapshots: numbered config versions per device, the per-device version
 * counter that numbers them safely under concurrency, snapshots and their per-device progress.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('snapshots', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    // {site_id?, device_type?}; bulk pulls use {device_ids}. Empty means every device.
    t.jsonb('device_filter').notNullable().defaultTo('{}');
    // Which methods each device backup tries: cli, structured or both.
    t.text('method').notNullable().defaultTo('cli');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('total_devices').notNullable().defaultTo(0);
    t.integer('successful_devices').notNullable().defaultTo(0);
    t.integer('failed_devices').notNullable().defaultTo(0);
    t.integer('timeout_seconds');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    // A collection still running after this instant is finished by the sweeper.
    t.timestamp('deadline_at', { useTz: true });
    t.uuid('created_by');
    t.text('created_by_name').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE snapshots ADD CONSTRAINT snapshots_status_check
    CHECK (status IN ('pending', 'collecting', 'completed', 'partial', 'failed'))`);
  await knex.raw(`CREATE INDEX snapshots_collecting ON snapshots (deadline_at) WHERE status = 'collecting'`);

  await knex.schema.createTable('config_versions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable().references('devices.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    // cli or structured: the pull method that produced this version.
    t.text('method').notNullable();
    t.text('config_format').notNullable();
    t.text('config_hash').notNullable();
    t.text('source').notNullable();
    t.text('pulled_via').notNullable();
    t.text('status').notNullable();
    t.text('error_message');
    t.uuid('snapshot_id').references('snapshots.id').onDelete('SET NULL');
    t.uuid('job_id');
    t.text('notes').notNullable().defaultTo('');
    t.text('notes_by').notNullable().defaultTo('');
    t.text('config_text').notNullable().defaultTo('');
    t.integer('size_bytes').notNullable().defaultTo(0);
    t.integer('line_count').notNullable().defaultTo(0);
    // Session transcript with every secret masked.
    t.text('transcript').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['device_id', 'version']);
    t.index(['snapshot_id']);
    t.index(['job_id']);
    t.index(['org_id']);
  });
  await knex.raw(`ALTER TABLE config_versions ADD CONSTRAINT config_versions_status_check
    CHECK (status IN ('success', 'failed'))`);

  // One row per device: the last version number handed out, taken under its row lock.
  await knex.schema.createTable('config_version_counters', (t) => {
    t.uuid('device_id').primary().references('devices.id').onDelete('CASCADE');
    t.integer('last_version').notNullable();
  });

  // One single-device pull (POST .../pull): its job's groupId, so the outcome handler knows what
  // was asked even when the job fails before any method ran.
  await knex.schema.createTable('config_pulls', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable().references('devices.id').onDelete('CASCADE');
    t.specificType('methods', 'text[]').notNullable();
    t.text('structured_transport');
    t.uuid('job_id');
    t.uuid('requested_by');
    t.text('requested_by_name').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['device_id']);
  });

  // The devices of one collection run and where each stands. device_id carries no foreign key
  // so that deleting a device mid-run cannot leave the run short of a row.
  await knex.schema.createTable('snapshot_devices', (t) => {
    t.uuid('snapshot_id').notNullable().references('snapshots.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable();
    t.text('device_name').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('error_message');
    t.uuid('job_id');
    t.integer('attempts').notNullable().defaultTo(1);
    // What this device's backup job tries: cli and/or structured, and the structured transport.
    t.specificType('methods', 'text[]').notNullable().defaultTo('{}');
    t.text('structured_transport');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['snapshot_id', 'device_id']);
  });
  await knex.raw(`ALTER TABLE snapshot_devices ADD CONSTRAINT snapshot_devices_status_check
    CHECK (status IN ('pending', 'success', 'failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['snapshot_devices', 'config_pulls', 'config_version_counters', 'config_versions', 'snapshots']) {
    await knex.schema.dropTableIfExists(table);
  }
}
