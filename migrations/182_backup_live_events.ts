import type { Knex } from 'knex';
import { batchesOf } from './160_live_statement_notify';

/**
 * Live `backup` events on /api/live: a backup job of a device (Back up now, a bulk or scheduled
 * backup, a snapshot's device) announces queued when submitted, running when an agent starts it,
 * and succeeded or failed when its outcome is recorded. Like migration 160, a statement-level
 * trigger sends one statement's events in `batch` notifications, so every replica hears them and
 * the final event is only delivered once the versions of that outcome are committed with it.
 *
 * running is announced once the job is handed to an agent (dispatched): the agent's own start
 * report often arrives after its result, and then changes no row. The later dispatched → running
 * change is not announced again.
 *
 * A finished job whose every method failed (the agent ran, the device refused) is announced as
 * failed with the first method's error: the backup failed, whatever the job's own status says.
 * Other kinds of jobs are skipped before any JSON is built.
 */
const FIRST_ERROR =
  "(SELECT r->>'error' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.result->'results') = 'array' THEN n.result->'results' ELSE " +
  "'[]'::jsonb END) r WHERE r->>'error' IS NOT NULL LIMIT 1)";
const ALL_FAILED = `(jsonb_typeof(n.result->'results') = 'array' AND jsonb_array_length(n.result->'results') > 0
  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(n.result->'results') r WHERE r->>'error' IS NULL))`;
const OUTCOME = `CASE WHEN n.status = 'succeeded' AND ${ALL_FAILED} THEN 'failed' WHEN n.status = 'dispatched' THEN 'running' ELSE n.status END`;
const EVENTS = `SELECT n.org_id, n.seq AS ord, json_build_object('type', 'backup', 'org_id', n.org_id, 'job_id', n.id, 'device_id', n.device_id,
    'group_id', n.group_id, 'status', ${OUTCOME},
    'error', left(CASE WHEN n.status = 'failed' THEN n.error WHEN ${OUTCOME} = 'failed' THEN ${FIRST_ERROR} END, 800),
    'created_at', n.created_at, 'started_at', n.started_at, 'finished_at', n.finished_at) AS event
  FROM new_rows n`;

/**
 * sb_live_notify_backups(), its events batched by `batches` (migration 160's; 185 re-creates it
 * with cheaper batching), after `guard` (a statement that may return first: migration 188's).
 */
export const liveBackupsFunction = (batches: (events: string) => string, guard = '') => `
    CREATE OR REPLACE FUNCTION sb_live_notify_backups() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE payload text;
    BEGIN${guard}
      IF NOT EXISTS (SELECT 1 FROM new_rows WHERE kind = 'backup') THEN RETURN NULL; END IF;
      IF TG_OP = 'INSERT' THEN
        FOR payload IN ${batches(`${EVENTS} WHERE n.kind = 'backup'`)} LOOP
          PERFORM pg_notify('sb_live', payload);
        END LOOP;
      ELSE
        -- Updates announce a job when it went back to the queue (redelivery), to an agent, or ended.
        FOR payload IN ${batches(`${EVENTS} JOIN old_rows o ON o.id = n.id
            WHERE n.kind = 'backup' AND n.status IS DISTINCT FROM o.status AND NOT (n.status = 'running' AND o.status = 'dispatched')`)} LOOP
          PERFORM pg_notify('sb_live', payload);
        END LOOP;
      END IF;
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(liveBackupsFunction(batchesOf));
  await knex.raw(`CREATE TRIGGER jobs_backup_live_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_live_notify_backups()`);
  await knex.raw(`CREATE TRIGGER jobs_backup_live_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_live_notify_backups()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS jobs_backup_live_insert ON jobs');
  await knex.raw('DROP TRIGGER IF EXISTS jobs_backup_live_update ON jobs');
  await knex.raw('DROP FUNCTION IF EXISTS sb_live_notify_backups()');
}
