import type { Knex } from 'knex';

/** Agents (enrollment, keys, heartbeats) and durable jobs with their log lines. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    // null = the organization's default pool.
    t.uuid('site_id').references('sites.id').onDelete('RESTRICT');
    // The built-in agent of `npm start` (one per installation).
    t.boolean('builtin').notNullable().defaultTo(false);
    // sha256 of the one-time enrollment token; cleared once redeemed.
    t.text('enrollment_token_hash').unique();
    t.timestamp('enrollment_expires_at', { useTz: true });
    t.timestamp('enrolled_at', { useTz: true });
    // Public P-256 key (JWK): verifies the agent's signatures, receives device secrets.
    t.jsonb('public_key');
    t.timestamp('revoked_at', { useTz: true });
    t.text('version').notNullable().defaultTo('');
    t.jsonb('capabilities').notNullable().defaultTo('[]');
    t.timestamp('last_seen_at', { useTz: true });
    t.integer('active_jobs').notNullable().defaultTo(0);
    t.integer('max_jobs').notNullable().defaultTo(0);
    t.integer('pending_events').notNullable().defaultTo(0);
    t.integer('completed_jobs').notNullable().defaultTo(0);
    t.integer('failed_jobs').notNullable().defaultTo(0);
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'site_id']);
  });
  // Names are unique among an organization's live agents; a revoked agent's name can be reused.
  await knex.raw('CREATE UNIQUE INDEX agents_org_name_live ON agents (org_id, lower(name)) WHERE revoked_at IS NULL');

  await knex.schema.createTable('jobs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.bigIncrements('seq', { primaryKey: false });
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    // No foreign key: a device deleted while its job waits ends the job with that reason.
    t.uuid('device_id').notNullable();
    t.uuid('group_id');
    t.jsonb('params').notNullable().defaultTo('{}');
    // queued → dispatched → running → succeeded | failed
    t.text('status').notNullable().defaultTo('queued');
    t.text('pool');
    t.uuid('site_id');
    t.text('transport');
    t.integer('attempt').notNullable().defaultTo(0);
    t.bigInteger('stream_seq');
    t.uuid('agent_id');
    t.text('error');
    t.jsonb('result');
    // Times recording the outcome failed (an outcome handler threw); after a few the job ends failed.
    t.integer('record_failures').notNullable().defaultTo(0);
    t.timestamp('deadline_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('dispatched_at', { useTz: true });
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.index(['group_id']);
    t.index(['org_id', 'device_id', 'finished_at']);
    t.index(['agent_id']);
  });
  await knex.raw("CREATE INDEX jobs_open ON jobs (seq) WHERE status IN ('queued', 'dispatched', 'running')");
  await knex.raw("CREATE INDEX jobs_open_deadline ON jobs (deadline_at) WHERE status IN ('queued', 'dispatched', 'running')");
  // The database itself guarantees one job in flight per device.
  await knex.raw("CREATE UNIQUE INDEX jobs_one_in_flight_per_device ON jobs (device_id) WHERE status IN ('dispatched', 'running')");

  await knex.schema.createTable('job_logs', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('job_id').notNullable().references('jobs.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.uuid('agent_id');
    t.text('level').notNullable();
    t.text('text').notNullable();
    t.timestamp('at', { useTz: true }).notNullable();
    t.index(['job_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['job_logs', 'jobs', 'agents']) await knex.schema.dropTableIfExists(table);
}
