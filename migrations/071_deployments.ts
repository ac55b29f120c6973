import type { Knex } from 'knex';

/**
 * Deployments (their devices, per-service entries and log lines), instances, scheduled tasks
 * with their runs, and the live-progress notifications.
 *
 * A deployment's state lives here, never in a controller's memory: every transition is a row
 * update made by a request, a job outcome handler or the recovery sweep, so that any replica can
 * carry it on after another stops.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('deployments', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    // No foreign keys: a deployment stays in the history after its stack or instance is deleted.
    t.uuid('stack_id').notNullable();
    t.uuid('instance_id');
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.boolean('atomic').notNullable().defaultTo(true);
    t.integer('total_devices').notNullable().defaultTo(0);
    t.integer('succeeded_count').notNullable().defaultTo(0);
    t.integer('failed_count').notNullable().defaultTo(0);
    t.jsonb('target_devices').notNullable().defaultTo('[]');
    t.jsonb('variable_values').notNullable().defaultTo('{}');
    t.text('error_message');
    t.integer('rollback_attempts').notNullable().defaultTo(0);
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.uuid('created_by');
    t.text('created_by_name').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'created_at']);
    t.index(['org_id', 'stack_id']);
  });
  await knex.raw(`ALTER TABLE deployments ADD CONSTRAINT deployments_status_check
    CHECK (status IN ('pending', 'in_progress', 'completed', 'failed', 'rolling_back', 'rolled_back'))`);
  await knex.raw(`CREATE INDEX deployments_open ON deployments (updated_at) WHERE status IN ('pending', 'in_progress', 'rolling_back')`);

  // One row per target device: where it stands, its current job, its pre-deployment backup.
  await knex.schema.createTable('deployment_devices', (t) => {
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable();
    t.text('device_name').notNullable();
    t.integer('position').notNullable();
    // gnmi or netconf: the platform transport of the device's services.
    t.text('transport').notNullable();
    // queued → running → completed | failed; atomic failure: restore_queued → restoring →
    // restored | restore_failed; rollback: rollback_queued → rolling_back → rolled_back | rollback_failed.
    t.text('status').notNullable().defaultTo('queued');
    t.timestamp('status_since', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.uuid('job_id');
    t.uuid('backup_config_id');
    t.boolean('changed').notNullable().defaultTo(false);
    t.text('error_message');
    t.primary(['deployment_id', 'device_id']);
    t.index(['job_id']);
  });

  // API.md's device entries: one per device and service.
  await knex.schema.createTable('deployment_entries', (t) => {
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('device_id').notNullable();
    t.integer('service_position').notNullable();
    t.integer('service_order').notNullable();
    t.text('service_name').notNullable();
    t.uuid('template_id').notNullable();
    t.text('rendered_config').notNullable();
    t.text('target_path');
    t.text('operation').notNullable();
    t.text('config_format').notNullable();
    t.primary(['deployment_id', 'device_id', 'service_position']);
  });

  await knex.schema.createTable('deployment_logs', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('deployment_id').notNullable().references('deployments.id').onDelete('CASCADE');
    t.uuid('org_id').notNullable();
    t.uuid('device_id');
    t.text('level').notNullable();
    t.text('message').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['deployment_id', 'id']);
    t.index(['deployment_id', 'device_id', 'id']);
  });

  await knex.schema.createTable('instances', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('stack_id').notNullable();
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.jsonb('target_devices').notNullable().defaultTo('[]');
    t.jsonb('variable_values').notNullable().defaultTo('{}');
    t.uuid('last_deployment_id');
    t.uuid('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'name']);
  });

  await knex.schema.createTable('scheduled_tasks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('type').notNullable();
    t.text('cron').notNullable();
    t.text('timezone').notNullable().defaultTo('UTC');
    t.boolean('enabled').notNullable().defaultTo(true);
    // deployment: instance_id; snapshot: snapshot_id; backup: device_filter and method.
    t.uuid('instance_id').references('instances.id').onDelete('CASCADE');
    t.uuid('snapshot_id').references('snapshots.id').onDelete('CASCADE');
    t.jsonb('device_filter').notNullable().defaultTo('{}');
    t.text('method').notNullable().defaultTo('both');
    t.timestamp('next_run_at', { useTz: true });
    t.timestamp('last_run_at', { useTz: true });
    t.text('last_status');
    t.text('last_error');
    t.jsonb('last_result');
    // The task runs as the user who created it (their organization, their name in the audit).
    t.uuid('created_by');
    t.text('created_by_name').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'name']);
  });
  await knex.raw(`ALTER TABLE scheduled_tasks ADD CONSTRAINT scheduled_tasks_type_check CHECK (type IN ('deployment', 'snapshot', 'backup'))`);
  await knex.raw('CREATE INDEX scheduled_tasks_due ON scheduled_tasks (next_run_at) WHERE enabled');

  // One row per fired run: the primary key is the claim, so a run fires once however many
  // controllers see it due.
  await knex.schema.createTable('scheduled_task_runs', (t) => {
    t.uuid('task_id').notNullable().references('scheduled_tasks.id').onDelete('CASCADE');
    t.timestamp('scheduled_for', { useTz: true }).notNullable();
    t.text('controller').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('running');
    t.text('error');
    t.jsonb('result');
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.primary(['task_id', 'scheduled_for']);
  });

  // Live progress: committed changes of deployments, their log lines and snapshots are
  // announced on channel sb_live (delivered at commit, to every controller replica).
  await knex.raw(`
    CREATE FUNCTION sb_live_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload jsonb;
    BEGIN
      IF TG_TABLE_NAME = 'deployments' THEN
        IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.succeeded_count = OLD.succeeded_count AND NEW.failed_count = OLD.failed_count THEN
          RETURN NEW;
        END IF;
        payload := jsonb_build_object('type', 'deployment', 'org_id', NEW.org_id, 'id', NEW.id, 'name', NEW.name, 'status', NEW.status,
          'total_devices', NEW.total_devices, 'succeeded_count', NEW.succeeded_count, 'failed_count', NEW.failed_count,
          'started_at', NEW.started_at, 'completed_at', NEW.completed_at);
      ELSIF TG_TABLE_NAME = 'deployment_logs' THEN
        payload := jsonb_build_object('type', 'deployment_log', 'org_id', NEW.org_id, 'deployment_id', NEW.deployment_id, 'id', NEW.id,
          'level', NEW.level, 'message', left(NEW.message, 2000), 'device_id', NEW.device_id, 'created_at', NEW.created_at);
      ELSIF TG_TABLE_NAME = 'deployment_devices' THEN
        IF TG_OP = 'UPDATE' AND NEW.status = OLD.status THEN
          RETURN NEW;
        END IF;
        payload := jsonb_build_object('type', 'deployment_device', 'org_id', (SELECT org_id FROM deployments WHERE id = NEW.deployment_id),
          'deployment_id', NEW.deployment_id, 'device_id', NEW.device_id, 'device_name', NEW.device_name, 'status', NEW.status,
          'backup_config_id', NEW.backup_config_id, 'error_message', left(NEW.error_message, 2000));
      ELSIF TG_TABLE_NAME = 'snapshots' THEN
        IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.successful_devices = OLD.successful_devices AND NEW.failed_devices = OLD.failed_devices THEN
          RETURN NEW;
        END IF;
        payload := jsonb_build_object('type', 'snapshot', 'org_id', NEW.org_id, 'id', NEW.id, 'name', NEW.name, 'status', NEW.status,
          'total_devices', NEW.total_devices, 'successful_devices', NEW.successful_devices, 'failed_devices', NEW.failed_devices,
          'started_at', NEW.started_at, 'completed_at', NEW.completed_at);
      ELSE
        RETURN NEW;
      END IF;
      PERFORM pg_notify('sb_live', payload::text);
      RETURN NEW;
    END $$`);
  for (const table of ['deployments', 'deployment_logs', 'deployment_devices', 'snapshots']) {
    const events = table === 'deployment_logs' ? 'INSERT' : 'INSERT OR UPDATE';
    await knex.raw(`CREATE TRIGGER ${table}_live AFTER ${events} ON ${table} FOR EACH ROW EXECUTE FUNCTION sb_live_notify()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['deployments', 'deployment_logs', 'deployment_devices', 'snapshots'])
    await knex.raw(`DROP TRIGGER IF EXISTS ${table}_live ON ${table}`);
  await knex.raw('DROP FUNCTION IF EXISTS sb_live_notify()');
  for (const table of [
    'scheduled_task_runs',
    'scheduled_tasks',
    'instances',
    'deployment_logs',
    'deployment_entries',
    'deployment_devices',
    'deployments',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
