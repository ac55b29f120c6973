import type { Knex } from 'knex';

/**
 * Each device's state as the overview (GET /api/sites/health) reads it: its latest finished job
 * (status, error, kind, finished_at) and the time of its newest successful backup, kept up to date
 * by statement-level triggers as jobs finish and versions are stored. The overview then joins one
 * row per device instead of probing the jobs and config_versions indexes once per device, a cost
 * that grew with the machine's load and the jobs table (10,000 probes into 360,000 jobs).
 *
 * No foreign key to devices: jobs carry none (a device deleted while its job runs ends the job),
 * and the job's outcome must never fail on it. Deleting devices deletes their rows; a job finishing
 * after its device was deleted may leave one, which the overview's join to devices never shows.
 *
 * On the job path this is one upsert per statement that ends jobs (one row per device, in device
 * order so concurrent statements lock rows in the same order); a row's update is HOT (no indexed
 * column changes), helped by the fill factor. A statement that ends no job inserts nothing.
 */
const FINAL = "('succeeded', 'failed')";

const JOB_UPSERT = `
  INSERT INTO device_health AS h (org_id, device_id, job_status, job_error, job_kind, job_finished_at)
  SELECT DISTINCT ON (n.org_id, n.device_id) n.org_id, n.device_id, n.status, n.error, n.kind, n.finished_at
    FROM new_rows n
   WHERE n.status IN ${FINAL} AND n.finished_at IS NOT NULL
   ORDER BY n.org_id, n.device_id, n.finished_at DESC
  ON CONFLICT (org_id, device_id) DO UPDATE
    SET job_status = excluded.job_status, job_error = excluded.job_error, job_kind = excluded.job_kind,
        job_finished_at = excluded.job_finished_at
    WHERE h.job_finished_at IS NULL OR excluded.job_finished_at >= h.job_finished_at`;

const BACKUP_UPSERT = `
  INSERT INTO device_health AS h (org_id, device_id, backup_at)
  SELECT n.org_id, n.device_id, max(n.created_at)
    FROM new_rows n
   WHERE n.status = 'success'
   GROUP BY n.org_id, n.device_id
   ORDER BY n.org_id, n.device_id
  ON CONFLICT (org_id, device_id) DO UPDATE
    SET backup_at = excluded.backup_at
    WHERE h.backup_at IS NULL OR excluded.backup_at > h.backup_at`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE device_health (
    org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    device_id uuid NOT NULL,
    job_status text,
    job_error text,
    job_kind text,
    job_finished_at timestamptz,
    backup_at timestamptz,
    PRIMARY KEY (org_id, device_id)
  ) WITH (fillfactor = 80)`);
  // The state as it stands, for devices that exist.
  await knex.raw(`INSERT INTO device_health (org_id, device_id, job_status, job_error, job_kind, job_finished_at)
    SELECT DISTINCT ON (j.org_id, j.device_id) j.org_id, j.device_id, j.status, j.error, j.kind, j.finished_at
      FROM jobs j JOIN devices d ON d.id = j.device_id AND d.org_id = j.org_id
     WHERE j.status IN ${FINAL} AND j.finished_at IS NOT NULL
     ORDER BY j.org_id, j.device_id, j.finished_at DESC`);
  await knex.raw(`INSERT INTO device_health AS h (org_id, device_id, backup_at)
    SELECT org_id, device_id, max(created_at) FROM config_versions WHERE status = 'success' GROUP BY org_id, device_id
    ON CONFLICT (org_id, device_id) DO UPDATE SET backup_at = excluded.backup_at`);

  await knex.raw(`CREATE FUNCTION sb_device_health_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${JOB_UPSERT}; RETURN NULL; END $$`);
  await knex.raw(`CREATE FUNCTION sb_device_health_backups() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${BACKUP_UPSERT}; RETURN NULL; END $$`);
  await knex.raw(`CREATE FUNCTION sb_device_health_forget() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN DELETE FROM device_health h USING old_rows o WHERE h.org_id = o.org_id AND h.device_id = o.id; RETURN NULL; END $$`);
  for (const op of ['INSERT', 'UPDATE']) {
    await knex.raw(`CREATE TRIGGER jobs_device_health_${op.toLowerCase()} AFTER ${op} ON jobs
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_device_health_jobs()`);
  }
  await knex.raw(`CREATE TRIGGER config_versions_device_health AFTER INSERT ON config_versions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_device_health_backups()`);
  await knex.raw(`CREATE TRIGGER devices_device_health_forget AFTER DELETE ON devices
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION sb_device_health_forget()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS jobs_device_health_insert ON jobs');
  await knex.raw('DROP TRIGGER IF EXISTS jobs_device_health_update ON jobs');
  await knex.raw('DROP TRIGGER IF EXISTS config_versions_device_health ON config_versions');
  await knex.raw('DROP TRIGGER IF EXISTS devices_device_health_forget ON devices');
  await knex.raw('DROP FUNCTION IF EXISTS sb_device_health_jobs()');
  await knex.raw('DROP FUNCTION IF EXISTS sb_device_health_backups()');
  await knex.raw('DROP FUNCTION IF EXISTS sb_device_health_forget()');
  await knex.raw('DROP TABLE IF EXISTS device_health');
}
