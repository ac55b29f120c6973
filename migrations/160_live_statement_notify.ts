import type { Knex } from 'knex';

/**
 * Live notifications of deployment log lines and device states, once per statement instead of
 * once per row, and never too long to send. pg_notify refuses a payload of 8,000 bytes or more,
 * and a refused notification fails the write that caused it; the row trigger of migration 071
 * put up to 2,000 characters of a message in one, which JSON can grow past that (a control
 * character takes 6 bytes, an emoji 4), so one odd line from a device could stop its outcome from
 * being recorded. Now a statement-level trigger reads the statement's rows from its transition
 * tables and sends them as `batch` notifications, each holding events of one organization in row
 * order, which the live hub unpacks into the same events as before. A batch holds events while
 * they start under 3,000 bytes into it (under 6,500 bytes in all); an event over 3,500 bytes goes
 * alone, and messages are cut to 1,000 characters (at most 6,000 bytes), error messages to 800
 * (the stored rows are never cut). Built as json, not jsonb: measured with pg_stat_statements over
 * 1,000 deployed devices, the notifications of recording outcomes cost 340 ms of statement time
 * this way, 400 ms with the row trigger and 450 ms as jsonb.
 */
const EVENTS_OF = {
  deployment_logs: `SELECT n.org_id, n.id AS ord, json_build_object('type', 'deployment_log', 'org_id', n.org_id, 'deployment_id', n.deployment_id,
      'id', n.id, 'level', n.level, 'message', left(n.message, 1000), 'device_id', n.device_id, 'created_at', n.created_at) AS event
    FROM new_rows n`,
  deployment_devices: `SELECT d.org_id, row_number() OVER (ORDER BY n.position) AS ord, json_build_object('type', 'deployment_device', 'org_id', d.org_id,
      'deployment_id', n.deployment_id, 'device_id', n.device_id, 'device_name', left(n.device_name, 255), 'status', n.status,
      'backup_config_id', n.backup_config_id, 'error_message', left(n.error_message, 800)) AS event
    FROM new_rows n JOIN deployments d ON d.id = n.deployment_id`,
};

/**
 * The batches of one statement's events (`events`: org_id, ord, event), in order. `materialized`
 * (migration 185) builds each event once: an inlined CTE is evaluated where it is read, twice here.
 */
export const batchesOf = (events: string, materialized = false) => `
  WITH e AS ${materialized ? 'MATERIALIZED ' : ''}(${events}),
  s AS (SELECT org_id, ord, event, octet_length(event::text) AS size FROM e),
  g AS (SELECT org_id, ord, event, CASE WHEN size > 3500 THEN -ord ELSE (sum(size) OVER (PARTITION BY org_id ORDER BY ord) - size) / 3000 END AS chunk FROM s)
  SELECT json_build_object('type', 'batch', 'org_id', org_id, 'events', json_agg(event ORDER BY ord))::text
    FROM g GROUP BY org_id, chunk ORDER BY min(ord)`;

/** PL/pgSQL sending each batch (`batches` builds the query) of `events` on sb_live (`payload` is the function's variable). */
const notifyBatches = (batches: (events: string) => string, events: string) => `FOR payload IN ${batches(events)} LOOP
          PERFORM pg_notify('sb_live', payload);
        END LOOP;`;

/**
 * sb_live_notify_rows(), its events batched by `batches` (migration 185 re-creates it with cheaper
 * batching), after `guard` (a statement that may return first: migration 188's).
 */
export const liveRowsFunction = (batches: (events: string) => string, guard = '') => `
    CREATE OR REPLACE FUNCTION sb_live_notify_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload text;
    BEGIN${guard}
      IF TG_TABLE_NAME = 'deployment_logs' THEN
        ${notifyBatches(batches, EVENTS_OF.deployment_logs)}
      ELSIF TG_OP = 'INSERT' THEN
        ${notifyBatches(batches, EVENTS_OF.deployment_devices)}
      ELSE
        -- Updates announce a device only when its status changed.
        ${notifyBatches(
          batches,
          `${EVENTS_OF.deployment_devices}
            JOIN old_rows o ON o.deployment_id = n.deployment_id AND o.device_id = n.device_id
           WHERE n.status IS DISTINCT FROM o.status`,
        )}
      END IF;
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(liveRowsFunction(batchesOf));
  await knex.raw('DROP TRIGGER IF EXISTS deployment_logs_live ON deployment_logs');
  await knex.raw('DROP TRIGGER IF EXISTS deployment_devices_live ON deployment_devices');
  await knex.raw(`CREATE TRIGGER deployment_logs_live AFTER INSERT ON deployment_logs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_live_notify_rows()`);
  // A trigger with transition tables fires on one event only.
  await knex.raw(`CREATE TRIGGER deployment_devices_live_insert AFTER INSERT ON deployment_devices
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_live_notify_rows()`);
  await knex.raw(`CREATE TRIGGER deployment_devices_live_update AFTER UPDATE ON deployment_devices
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_live_notify_rows()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS deployment_logs_live ON deployment_logs');
  await knex.raw('DROP TRIGGER IF EXISTS deployment_devices_live_insert ON deployment_devices');
  await knex.raw('DROP TRIGGER IF EXISTS deployment_devices_live_update ON deployment_devices');
  await knex.raw('DROP FUNCTION IF EXISTS sb_live_notify_rows()');
  await knex.raw('CREATE TRIGGER deployment_logs_live AFTER INSERT ON deployment_logs FOR EACH ROW EXECUTE FUNCTION sb_live_notify()');
  await knex.raw(
    'CREATE TRIGGER deployment_devices_live AFTER INSERT OR UPDATE ON deployment_devices FOR EACH ROW EXECUTE FUNCTION sb_live_notify()',
  );
}
