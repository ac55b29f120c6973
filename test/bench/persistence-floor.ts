/**
 * The persistence floor: the least PostgreSQL work any deployment of the deploy issue needs per
 * device, whatever the code around it. For each device: a job row (DESIGN.md: the controller keeps
 * no job state in memory) inserted and later finished, the pre-change backup stored as a config
 * version with its next version number, the device's state with the backup's id, and one log
 * line. Written here in bulk, one statement per step for the whole fleet (no run can batch
 * further: the steps happen at different times), against the real schema with its indexes and
 * live triggers, in one transaction. No REST call, no render, no NATS, no per-service entries,
 * no intermediate states: a lower bound.
 *
 * The rows are removed and the device states put back afterwards, outside the measurement.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { cpuMeter, cpuOfNamed, selfCpu } from './cpu';

export interface PersistenceFloor {
  cpuSeconds: number;
  text: string;
}

/** What the deployment's device rows held before the floor wrote them. */
type DeviceState = {
  device_id: string;
  status: string;
  job_id: string | null;
  backup_config_id: string | null;
  changed: boolean;
  status_since: Date;
};

/**
 * Writes the rows for every device of `deploymentId` (an ended deployment of the benchmark) with
 * `backups` (device id → its backup as the agent sent it), measures this process's and
 * PostgreSQL's CPU, then undoes it.
 */
export async function persistenceFloor(
  db: Knex,
  deploymentId: string,
  backups: Map<string, { text: string; format: string }>,
): Promise<PersistenceFloor> {
  const { org_id: orgId } = await db('deployments').where({ id: deploymentId }).first('org_id');
  const before: DeviceState[] = await db('deployment_devices')
    .where({ deployment_id: deploymentId })
    .select('device_id', 'status', 'job_id', 'backup_config_id', 'changed', 'status_since');
  const deviceIds = before.map((d) => d.device_id);
  const counting = cpuMeter({ 'this process': selfCpu, postgres: () => cpuOfNamed('postgres') });
  const jobIds = await db.transaction(async (trx) => {
    const jobs: { id: string; device_id: string }[] = (
      await trx.raw(
        `INSERT INTO jobs (org_id, kind, device_id, group_id, params, pool, transport, deadline_at)
       SELECT ?, 'deploy', d, ?, '{}'::jsonb, 'default', 'gnmi', now() + interval '1 hour' FROM unnest(?::uuid[]) AS d RETURNING id, device_id`,
        [orgId, deploymentId, deviceIds],
      )
    ).rows;
    const jobOf = new Map(jobs.map((j) => [j.device_id, j.id]));
    const versions = deviceIds.map((id) => {
      const backup = backups.get(id) ?? { text: '', format: 'json' };
      return {
        device_id: id,
        job_id: jobOf.get(id),
        config_format: backup.format,
        config_text: backup.text,
        config_hash: createHash('sha256').update(backup.text, 'utf8').digest('hex'),
        size_bytes: Buffer.byteLength(backup.text),
        line_count: backup.text.split('\n').length,
      };
    });
    const stored: { id: string; device_id: string }[] = (
      await trx.raw(
        `INSERT INTO config_versions (org_id, device_id, version, method, config_format, config_hash, source, pulled_via, status, job_id,
           config_text, size_bytes, line_count)
       SELECT ?, r.device_id, coalesce((SELECT max(v.version) FROM config_versions v WHERE v.device_id = r.device_id), 0) + 1,
              'structured', r.config_format, r.config_hash, 'deployment', 'gnmi', 'success', r.job_id, r.config_text, r.size_bytes, r.line_count
         FROM jsonb_to_recordset(?::jsonb) AS r(device_id uuid, job_id uuid, config_format text, config_hash text, config_text text,
           size_bytes int, line_count int)
       RETURNING id, device_id`,
        [orgId, JSON.stringify(versions)],
      )
    ).rows;
    const backupOf = new Map(stored.map((s) => [s.device_id, s.id]));
    await trx.raw(
      `UPDATE deployment_devices d SET status = 'completed', job_id = r.job_id, backup_config_id = r.backup_config_id, changed = true, status_since = now()
         FROM jsonb_to_recordset(?::jsonb) AS r(device_id uuid, job_id uuid, backup_config_id uuid)
        WHERE d.deployment_id = ? AND d.device_id = r.device_id`,
      [JSON.stringify(deviceIds.map((id) => ({ device_id: id, job_id: jobOf.get(id), backup_config_id: backupOf.get(id) }))), deploymentId],
    );
    await trx.raw(
      `INSERT INTO deployment_logs (deployment_id, org_id, device_id, level, message)
       SELECT ?, ?, d, 'info', 'services applied and verified' FROM unnest(?::uuid[]) AS d`,
      [deploymentId, orgId, deviceIds],
    );
    await trx.raw(`UPDATE jobs SET status = 'succeeded', result = '{"status":"succeeded"}'::jsonb, finished_at = now() WHERE id = ANY(?::uuid[])`, [
      jobs.map((j) => j.id),
    ]);
    return jobs.map((j) => j.id);
  });
  const cpu = counting(deviceIds.length);
  await undo(db, deploymentId, jobIds, before);
  return { cpuSeconds: cpu.total, text: cpu.text };
}

async function undo(db: Knex, deploymentId: string, jobIds: string[], before: DeviceState[]): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('deployment_logs').where({ deployment_id: deploymentId }).where('message', 'services applied and verified').delete();
    await trx('config_versions').whereIn('job_id', jobIds).delete();
    await trx('jobs').whereIn('id', jobIds).delete();
    await trx.raw(
      `UPDATE deployment_devices d SET status = r.status, job_id = r.job_id, backup_config_id = r.backup_config_id, changed = r.changed,
         status_since = r.status_since
         FROM jsonb_to_recordset(?::jsonb) AS r(device_id uuid, status text, job_id uuid, backup_config_id uuid, changed boolean, status_since timestamptz)
        WHERE d.deployment_id = ? AND d.device_id = r.device_id`,
      [JSON.stringify(before), deploymentId],
    );
  });
}
