import type { Knex } from 'knex';

/**
 * Discovery: poll results, the records of each device's latest polls, and the background
 * schedule (devices.next_poll_at, claimed with FOR UPDATE SKIP LOCKED by any controller).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('devices', (t) => {
    // null = not scheduled yet: the scheduler gives it a jittered first time.
    t.timestamp('next_poll_at', { useTz: true });
  });
  await knex.raw('CREATE INDEX devices_poll_due ON devices (next_poll_at NULLS FIRST) WHERE poll_enabled');

  await knex.schema.createTable('discovery_polls', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable().references('devices.id').onDelete('CASCADE');
    // manual (POST /poll) or schedule (background polling)
    t.text('trigger').notNullable();
    t.text('transport').notNullable();
    // queued (job waiting or running) → succeeded | partial | failed
    t.text('status').notNullable().defaultTo('queued');
    t.uuid('job_id');
    t.text('error');
    t.uuid('requested_by');
    t.jsonb('counts').notNullable().defaultTo('{}');
    t.jsonb('sections').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['org_id', 'device_id', 'created_at']);
    t.index(['job_id']);
  });
  // One poll of a device at a time, whichever controller asked.
  await knex.raw("CREATE UNIQUE INDEX discovery_polls_one_open ON discovery_polls (device_id) WHERE status = 'queued'");

  await knex.schema.createTable('discovery_records', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable().references('devices.id').onDelete('CASCADE');
    // interfaces | neighbors | arp | mac | vlans
    t.text('kind').notNullable();
    // For neighbors: cdp or lldp (each protocol's set is replaced on its own).
    t.text('section').notNullable();
    t.integer('position').notNullable();
    t.uuid('poll_id').notNullable().references('discovery_polls.id').onDelete('CASCADE');
    t.jsonb('data').notNullable();
    t.timestamp('collected_at', { useTz: true }).notNullable();
    t.index(['device_id', 'kind', 'position']);
    t.index(['org_id', 'kind']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('discovery_records');
  await knex.schema.dropTableIfExists('discovery_polls');
  await knex.raw('DROP INDEX IF EXISTS devices_poll_due');
  await knex.schema.alterTable('devices', (t) => t.dropColumn('next_poll_at'));
}
