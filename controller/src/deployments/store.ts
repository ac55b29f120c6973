import type { Knex } from 'knex';
import type { ConfigFormat, Transport } from '../../../shared/src/device/values';
import type { PublicJwk } from '../../../shared/src/jobs/crypto';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { PREPARED, type Db } from '../db/knex';
import type { JobRow } from '../jobs/store';
import { insertVersionsOf, NEW_VERSION_COLUMNS, newVersionRecord, versionNumbering, type NewVersion } from '../configs/store';

export type DeploymentStatus =
  'pending' | 'in_progress' | 'completed' | 'failed' | 'rolling_back' | 'rolled_back' | 'dry_run_completed' | 'dry_run_failed';

/**
 * Device states. Deploy: queued → running (one deploy job; backup_config_id is set when the
 * agent's backup is stored, before the push) → completed | failed. Restore of an atomic stack
 * after a failure: restore_queued → restoring → restored | restore_failed. Rollback:
 * rollback_queued → rolling_back → rolled_back | rollback_failed.
 */
export type DeviceStatus =
  | 'queued'
  | 'running'
  | 'completed'
  | 'failed'
  | 'restore_queued'
  | 'restoring'
  | 'restored'
  | 'restore_failed'
  | 'rollback_queued'
  | 'rolling_back'
  | 'rolled_back'
  | 'rollback_failed';

export const QUEUED: DeviceStatus[] = ['queued', 'restore_queued', 'rollback_queued'];
export const RUNNING: DeviceStatus[] = ['running', 'restoring', 'rolling_back'];
/** The job kind of a queued state and the running state it moves to. */
export const NEXT: Partial<Record<DeviceStatus, { kind: 'deploy' | 'rollback'; running: DeviceStatus }>> = {
  queued: { kind: 'deploy', running: 'running' },
  restore_queued: { kind: 'rollback', running: 'restoring' },
  rollback_queued: { kind: 'rollback', running: 'rolling_back' },
};

export interface DeploymentRow {
  id: string;
  org_id: string;
  stack_id: string;
  instance_id: string | null;
  name: string;
  status: DeploymentStatus;
  atomic: boolean;
  total_devices: number;
  succeeded_count: number;
  failed_count: number;
  target_devices: { device_id: string }[];
  variable_values: Record<string, unknown>;
  error_message: string | null;
  rollback_attempts: number;
  /** Computes each device's diff without changing it (job kind dry_run); ends dry_run_completed or dry_run_failed. */
  dry_run: boolean;
  started_at: Date | null;
  completed_at: Date | null;
  created_by: string | null;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

export interface DeploymentDeviceRow {
  deployment_id: string;
  device_id: string;
  device_name: string;
  position: number;
  /** The deploy transport: gnmi or netconf (structured templates), ssh (cli templates). */
  transport: 'gnmi' | 'netconf' | 'ssh';
  status: DeviceStatus;
  status_since: Date;
  job_id: string | null;
  backup_config_id: string | null;
  changed: boolean;
  error_message: string | null;
  /** Dry runs: the unified diff of the device's config after the change against before ('' when none). */
  dry_run_diff: string | null;
  /** SHA-256 of the running config the deploy's verify read: what a restore or rollback expects to find. */
  left_sha256: string | null;
}

export interface EntryRow {
  deployment_id: string;
  device_id: string;
  service_position: number;
  service_order: number;
  service_name: string;
  template_id: string;
  rendered_config: string;
  target_path: string | null;
  operation: 'replace' | 'merge' | 'delete';
  config_format: 'json' | 'xml' | 'cli';
  /** The secret variable values its rendered config holds, for the agent to mask (null: none). */
  secrets: string[] | null;
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  device_id?: string | null;
  created_at?: Date;
}

/** What the state machine reads of a deployment it locks (not the targets and variables, large on big stacks). */
export type LockedDeployment = Pick<DeploymentRow, 'id' | 'org_id' | 'status' | 'atomic' | 'total_devices' | 'rollback_attempts' | 'dry_run'> & {
  /** The last POST /rollback said force: the backups go back even on devices changed since (no left_sha256 check). */
  rollback_force: boolean;
};

/** A device row locked for recording a job outcome, with its deployment's organization and the version number of its kept backup. */
export type LockedDevice = DeploymentDeviceRow & { org_id: string; backup_version: number | null };

/** A backup of a backup_store request to store (storeBackups): the version's fields but its device's and job's, which the statement sets. */
export interface BackupToStore {
  job_id: string;
  attempt: number;
  /** The requesting agent's organization: the job must be of it. */
  org_id: string;
  /** The requesting agent and the key its request was verified against: it must still be its key, unrevoked. */
  agent_id: string;
  agent_key: PublicJwk;
  version: Omit<NewVersion, 'org_id' | 'device_id' | 'job_id'>;
}

/**
 * What storeBackups found for a backup, in request order. `verdict`: not_open (no such open
 * deploy job of the organization in the agent's pool), dispatching (its dispatch has not committed yet), stale (another
 * attempt is current), not_current (its device went on to another job), or ok. For ok: `nth`
 * counts the backups of the same device in the request (only the first can be stored),
 * `stored_id` is the version stored for it, else `backup_config_id` the backup kept before (its
 * text null when that version is gone).
 */
export interface BackupVerdict {
  verdict: 'signer_changed' | 'not_open' | 'dispatching' | 'stale' | 'not_current' | 'ok';
  job_attempt: number | null;
  deployment_id: string | null;
  device_id: string | null;
  nth: number | null;
  stored_id: string | null;
  backup_config_id: string | null;
  backup_text: string | null;
  backup_format: ConfigFormat | null;
  backup_via: Transport | null;
}

/** A stored pre-deployment backup as a rollback job (restore or rollback) carries it. */
export interface StoredBackup {
  config_text: string;
  config_format: ConfigFormat;
  pulled_via: Transport;
}

/** A device row as an outcome leaves it: every column the recorder may change, and whether its status was set. */
export type DeviceWrite = Pick<
  DeploymentDeviceRow,
  'deployment_id' | 'device_id' | 'status' | 'job_id' | 'backup_config_id' | 'changed' | 'error_message' | 'dry_run_diff' | 'left_sha256'
> & { stamp: boolean };

/** Log lines of a deployment, after the lines of job `job_id` (as lines of `device_id`) when set. */
export interface LogBatch {
  deployment_id: string;
  org_id: string;
  device_id: string | null;
  job_id: string | null;
  lines: LogLine[];
}

type Q = Db | Knex.Transaction;

/** SQL of the device rows outcomes leave (one jsonb parameter of DeviceWrite rows) as CTE `writes`, for UPDATE_DEVICES. */
const DEVICE_WRITES = `writes AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(deployment_id uuid, device_id uuid, status text, job_id uuid,
    backup_config_id uuid, changed boolean, error_message text, dry_run_diff text, left_sha256 text, stamp boolean))`;
/** SQL of writing CTE `writes` to the device rows, found by key, not by a scan of every deployment's devices. */
const UPDATE_DEVICES = `UPDATE deployment_devices d SET status = r.status, job_id = r.job_id, backup_config_id = r.backup_config_id, changed = r.changed,
    error_message = r.error_message, dry_run_diff = r.dry_run_diff, left_sha256 = r.left_sha256,
    status_since = CASE WHEN r.stamp THEN now() ELSE d.status_since END
    FROM writes r
   WHERE d.deployment_id = r.deployment_id AND d.device_id = r.device_id
     AND d.deployment_id = ANY(ARRAY(SELECT deployment_id FROM writes)) AND d.device_id = ANY(ARRAY(SELECT device_id FROM writes))`;
/** The columns of a stored backup's version that come from its locked device row (the rest from the request). */
const VERSION_FROM_V: Record<string, string> = { org_id: 'v.agent_org AS org_id', device_id: 'v.dd_device AS device_id' };
/**
 * SQL of a backup_store request's backups (one jsonb parameter of BackupToStore rows, `n` their
 * order), in one statement, so the request costs one round trip: each job with its deployment
 * device, locked in key order; the verdict on each backup (BackupVerdict); the first ok backup
 * of each device without a kept one stored as a config version (numbered like every version)
 * and set on the device. A device row that waited on another transaction's lock is read as that
 * one left it, its kept backup's text as the statement first saw it (see withBackupsCommittedMeanwhile).
 * Jobs, their deployment devices and kept backups are looked up by key (`= ANY`, a LATERAL with
 * LIMIT so that it is not turned back into a join): planned as joins against the recordset's
 * default estimate of 100 rows, each was a sequential scan of its table on every request once the
 * tables held a few thousand rows. The deployment devices are locked by a LATERAL per job (in key
 * order, the order of `j`): with `= ANY` filters their index scan cost as much as a sequential scan,
 * which the planner took, once per job, when it read `j` as one row.
 */
const STORE_BACKUPS = `WITH i AS (SELECT * FROM jsonb_to_recordset(?::jsonb)
      AS i(n int, job_id uuid, attempt int, agent_org uuid, agent_id uuid, agent_key jsonb, ${newVersionRecord(['org_id', 'device_id', 'job_id'])})),
  j AS MATERIALIZED (SELECT id, org_id, status, attempt, group_id, device_id, pool FROM jobs WHERE id = ANY(ARRAY(SELECT job_id FROM i)) AND kind = 'deploy'
     ORDER BY group_id, device_id),
  l AS MATERIALIZED (
    SELECT dd.deployment_id, dd.device_id AS dd_device, dd.status AS dd_status, dd.job_id AS dd_job, dd.backup_config_id,
           j.id AS job, j.org_id AS job_org_id, j.pool AS job_pool, j.status AS job_status, j.attempt AS job_attempt
      FROM j CROSS JOIN LATERAL (SELECT * FROM deployment_devices dd WHERE dd.deployment_id = j.group_id AND dd.device_id = j.device_id
        LIMIT 1 FOR NO KEY UPDATE) dd),
  v AS (
    SELECT i.*, l.*, CASE
        WHEN NOT EXISTS (SELECT 1 FROM agents a WHERE a.id = i.agent_id AND a.org_id = i.agent_org AND a.revoked_at IS NULL
          AND a.public_key = i.agent_key) THEN 'signer_changed'
        WHEN l.job IS NULL OR l.job_org_id <> i.agent_org
          OR l.job_pool <> (SELECT coalesce(a.site_id::text, '${DEFAULT_POOL}') FROM agents a WHERE a.id = i.agent_id) THEN 'not_open'
        WHEN l.job_status = 'queued' AND l.job_attempt = i.attempt - 1 THEN 'dispatching'
        WHEN l.job_status NOT IN ('dispatched', 'running') THEN 'not_open'
        WHEN l.job_attempt <> i.attempt THEN 'stale'
        WHEN l.dd_status <> 'running' OR (l.dd_job IS NOT NULL AND l.dd_job <> i.job_id) THEN 'not_current'
        ELSE 'ok' END AS verdict
      FROM i LEFT JOIN l ON l.job = i.job_id),
  e AS (SELECT n, row_number() OVER (PARTITION BY deployment_id, dd_device ORDER BY n) AS nth FROM v WHERE verdict = 'ok'),
  r AS (
    SELECT v.n AS i, 1 AS ord, v.deployment_id, ${NEW_VERSION_COLUMNS.map((c) => VERSION_FROM_V[c] ?? `v.${c}`).join(', ')}
      FROM v JOIN e ON e.n = v.n WHERE e.nth = 1 AND v.backup_config_id IS NULL),
  ${versionNumbering('r')},
  inserted AS (${insertVersionsOf('r')} RETURNING id, job_id),
  u AS (
    UPDATE deployment_devices dd SET backup_config_id = ins.id
      FROM inserted ins JOIN r ON r.job_id = ins.job_id
     WHERE dd.deployment_id = r.deployment_id AND dd.device_id = r.device_id)
  SELECT v.verdict, v.job_attempt, v.deployment_id, v.dd_device AS device_id, e.nth, ins.id AS stored_id, v.backup_config_id,
         cv.config_text AS backup_text, cv.config_format AS backup_format, cv.pulled_via AS backup_via
    FROM v LEFT JOIN e ON e.n = v.n LEFT JOIN inserted ins ON ins.job_id = v.job_id AND e.nth = 1
    LEFT JOIN LATERAL (SELECT cv.config_text, cv.config_format, cv.pulled_via FROM config_versions cv WHERE cv.id = v.backup_config_id LIMIT 1) cv ON true
   ORDER BY v.n`;

/** SQL of appending log batches: the batches (one jsonb parameter, see logInput) as CTE b, then the insert. */
const LOG_BATCHES = `b AS (SELECT * FROM ROWS FROM (jsonb_to_recordset(?::jsonb) AS (deployment_id uuid, org_id uuid, device_id uuid, job_id uuid, lines jsonb))
  WITH ORDINALITY AS b(deployment_id, org_id, device_id, job_id, lines, ord))`;
const INSERT_LOGS = `INSERT INTO deployment_logs (deployment_id, org_id, device_id, level, message, created_at)
  SELECT x.deployment_id, x.org_id, x.device_id, x.level, x.message, coalesce(x.created_at, now()) FROM (
    SELECT b.ord, 0 AS part, l.id AS seq, b.deployment_id, b.org_id, b.device_id, l.level, l.text AS message, l.at AS created_at
      FROM b CROSS JOIN LATERAL (SELECT l.id, l.level, l.text, l.at FROM job_logs l WHERE l.job_id = b.job_id ORDER BY l.id) l
    UNION ALL
    SELECT b.ord, 1 AS part, r.ord AS seq, b.deployment_id, b.org_id, r.device_id, r.level, r.message, r.created_at
      FROM b, ROWS FROM (jsonb_to_recordset(b.lines) AS (device_id uuid, level text, message text, created_at timestamptz))
        WITH ORDINALITY AS r(device_id, level, message, created_at, ord)
  ) x ORDER BY x.ord, x.part, x.seq`;
const logInput = (batches: LogBatch[]) =>
  JSON.stringify(
    batches.map((b) => ({
      ...b,
      lines: b.lines.map((l) => ({ device_id: l.device_id ?? null, level: l.level, message: l.message, created_at: l.created_at ?? null })),
    })),
  );

const LOCK_COLUMNS = ['id', 'org_id', 'status', 'atomic', 'total_devices', 'rollback_attempts', 'rollback_force', 'dry_run'];
const LIST_COLUMNS = [
  'id',
  'org_id',
  'stack_id',
  'instance_id',
  'name',
  'status',
  'atomic',
  'total_devices',
  'succeeded_count',
  'failed_count',
  'target_devices',
  'variable_values',
  'error_message',
  'rollback_attempts',
  'dry_run',
  'started_at',
  'completed_at',
  'created_by',
  'created_by_name',
  'created_at',
  'updated_at',
];

/** A new deployment's own fields (it starts pending); the others start at their defaults. */
export type NewDeployment = Pick<
  DeploymentRow,
  | 'org_id'
  | 'stack_id'
  | 'instance_id'
  | 'name'
  | 'atomic'
  | 'total_devices'
  | 'target_devices'
  | 'variable_values'
  | 'dry_run'
  | 'created_by'
  | 'created_by_name'
> & { status: 'pending' };

/** A new deployment's device: its status and outcome fields start at their defaults (queued). */
export type NewDeploymentDevice = Pick<DeploymentDeviceRow, 'device_id' | 'device_name' | 'position' | 'transport'>;

/**
 * SQL of a new deployment, its devices and its service entries (three jsonb parameters), in one
 * statement: one round trip, where row-by-row inserts of a 500-device deployment's 1,500 rows took
 * 26–28 ms of the 80–120 ms from the API call to its first job's start.
 */
const INSERT_DEPLOYMENT = `WITH d AS (
    INSERT INTO deployments (org_id, stack_id, instance_id, name, status, atomic, total_devices, target_devices, variable_values, dry_run,
                             created_by, created_by_name)
    SELECT * FROM jsonb_to_record(?::jsonb) AS r(org_id uuid, stack_id uuid, instance_id uuid, name text, status text, atomic boolean,
                  total_devices int, target_devices jsonb, variable_values jsonb, dry_run boolean, created_by uuid, created_by_name text)
    RETURNING ${LIST_COLUMNS.join(', ')}),
  dd AS (
    INSERT INTO deployment_devices (deployment_id, device_id, device_name, position, transport)
    SELECT d.id, r.device_id, r.device_name, r.position, r.transport
      FROM d, jsonb_to_recordset(?::jsonb) AS r(device_id uuid, device_name text, position int, transport text)
     ORDER BY r.position),
  e AS (
    INSERT INTO deployment_entries (deployment_id, device_id, service_position, service_order, service_name, template_id, rendered_config,
                                    target_path, operation, config_format, secrets)
    SELECT d.id, r.* FROM d, jsonb_to_recordset(?::jsonb) AS r(device_id uuid, service_position int, service_order int, service_name text,
                  template_id uuid, rendered_config text, target_path text, operation text, config_format text, secrets jsonb))
  SELECT * FROM d`;

/** The only SQL of deployments: their rows, devices, entries and logs, and the reads of jobs and backups they need. */
export class DeploymentStore {
  constructor(readonly db: Db) {}

  /** A new deployment with its devices and service entries, in one statement (INSERT_DEPLOYMENT). */
  async insert(
    trx: Knex.Transaction,
    deployment: NewDeployment,
    devices: NewDeploymentDevice[],
    entries: Omit<EntryRow, 'deployment_id'>[],
  ): Promise<DeploymentRow> {
    const { rows } = await trx
      .raw(INSERT_DEPLOYMENT, [JSON.stringify(deployment), JSON.stringify(devices), JSON.stringify(entries)])
      .options(PREPARED);
    return rows[0] as DeploymentRow;
  }

  list(orgId: string, filter: { stack_id?: string; limit: number; offset: number }): Promise<DeploymentRow[]> {
    const q = this.db('deployments')
      .where({ org_id: orgId })
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(filter.limit)
      .offset(filter.offset)
      .select(LIST_COLUMNS);
    if (filter.stack_id) q.where({ stack_id: filter.stack_id });
    return q;
  }

  find(orgId: string, id: string, q: Q = this.db): Promise<DeploymentRow | undefined> {
    return q('deployments').where({ org_id: orgId, id }).first(LIST_COLUMNS);
  }

  /**
   * Locks a deployment row for a transition (any organization: callers are internal). FOR NO KEY
   * UPDATE, not FOR UPDATE: the key-share locks that inserting its log lines takes (foreign key)
   * must not conflict with it, or two outcome handlers would deadlock.
   */
  lock(trx: Knex.Transaction, id: string): Promise<LockedDeployment | undefined> {
    return trx('deployments').where({ id }).forNoKeyUpdate().first(LOCK_COLUMNS).options(PREPARED);
  }

  /**
   * Serializes, within one organization, the transactions that start changing devices (a new
   * deployment, a rollback) with their check that no other open deployment holds the devices:
   * without it two requests could each find the other's devices free.
   */
  async lockOrgChanges(trx: Knex.Transaction, orgId: string): Promise<void> {
    await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('switchboard.deployments:' || ?::text, 0))`, [orgId]);
  }

  /**
   * Up to `limit` of `deviceIds` that an open deployment other than `exceptId` is changing (or may
   * still restore), with that deployment; dry runs change nothing and hold no device.
   */
  busyDevices(trx: Knex.Transaction, orgId: string, deviceIds: string[], exceptId: string | null, limit = 5) {
    return trx('deployments as d')
      .join('deployment_devices as dd', 'dd.deployment_id', 'd.id')
      .whereRaw(`d.status IN ('pending', 'in_progress', 'rolling_back')`) // the deployments_open index
      .where({ 'd.org_id': orgId, 'd.dry_run': false })
      .whereNot('d.id', exceptId ?? '00000000-0000-0000-0000-000000000000')
      .whereRaw('dd.device_id = ANY(?::uuid[])', [deviceIds])
      .orderBy('dd.device_name')
      .limit(limit)
      .select<{ id: string; name: string; status: string; device_name: string }[]>('d.id', 'd.name', 'd.status', 'dd.device_name');
  }

  async update(q: Q, id: string, fields: Record<string, unknown>): Promise<void> {
    await q('deployments')
      .where({ id })
      .update({ ...fields, updated_at: q.fn.now() });
  }

  devices(deploymentId: string, q: Q = this.db): Promise<DeploymentDeviceRow[]> {
    return q('deployment_devices').where({ deployment_id: deploymentId }).orderBy('position').select('*');
  }

  /** The first `limit` devices of a deployment waiting in a queued state, in push order. */
  queuedDevices(trx: Knex.Transaction, deploymentId: string, limit: number): Promise<DeploymentDeviceRow[]> {
    return trx('deployment_devices')
      .where({ deployment_id: deploymentId })
      .whereRaw('status = ANY(?::text[])', [QUEUED])
      .orderBy('position')
      .limit(limit)
      .select('*')
      .options(PREPARED);
  }

  /**
   * Locks device rows of deployments (any number, of any deployments) in one statement, in key
   * order so that two recorders never deadlock; also answers each deployment's organization.
   */
  async lockDevices(trx: Knex.Transaction, keys: { deployment_id: string; device_id: string }[]): Promise<LockedDevice[]> {
    if (keys.length === 0) return [];
    const { rows } = await trx
      .raw(
        `WITH k AS (SELECT * FROM unnest(?::uuid[], ?::uuid[]) AS k(deployment_id, device_id))
       SELECT dd.*, (SELECT d.org_id FROM deployments d WHERE d.id = dd.deployment_id) AS org_id,
                (SELECT cv.version FROM config_versions cv WHERE cv.id = dd.backup_config_id) AS backup_version
           FROM deployment_devices dd
         JOIN k ON dd.deployment_id = k.deployment_id AND dd.device_id = k.device_id
        WHERE dd.deployment_id = ANY(ARRAY(SELECT deployment_id FROM k)) AND dd.device_id = ANY(ARRAY(SELECT device_id FROM k)) -- by key, not a scan
        ORDER BY dd.deployment_id, dd.device_id
        FOR NO KEY UPDATE OF dd`,
        [keys.map((k) => k.deployment_id), keys.map((k) => k.device_id)],
      )
      .options(PREPARED);
    return rows;
  }

  /** A backup_store request's backups stored as STORE_BACKUPS says, in one statement: a verdict per backup, in order. */
  async storeBackups(backups: BackupToStore[]): Promise<BackupVerdict[]> {
    if (backups.length === 0) return [];
    const input = backups.map(({ org_id, version, ...backup }, n) => ({ n, ...backup, agent_org: org_id, ...version }));
    const { rows } = await this.db.raw(STORE_BACKUPS, [JSON.stringify(input)]).options(PREPARED);
    return this.withBackupsCommittedMeanwhile(rows as BackupVerdict[]);
  }

  /**
   * A row that waited on another transaction's lock comes back as that transaction left it, but
   * its kept backup as the statement first saw it: a backup the other stored and set on the
   * device meanwhile reads as missing. Those are read again (a new statement sees the commit).
   */
  private async withBackupsCommittedMeanwhile(rows: BackupVerdict[]): Promise<BackupVerdict[]> {
    const unread = rows.filter((r) => r.backup_config_id && r.backup_text === null).map((r) => r.backup_config_id!);
    if (unread.length === 0) return rows;
    const found = new Map<string, StoredBackup>(
      (
        await this.db('config_versions')
          .whereIn('id', [...new Set(unread)])
          .select('id', 'config_text', 'config_format', 'pulled_via')
      ).map((v: StoredBackup & { id: string }) => [v.id, v]),
    );
    return rows.map((r) => {
      const v = r.backup_config_id && r.backup_text === null ? found.get(r.backup_config_id) : undefined;
      return v ? { ...r, backup_text: v.config_text, backup_format: v.config_format, backup_via: v.pulled_via } : r;
    });
  }

  /** Sets status (and job or error) of many devices in one statement. */
  async updateDevices(
    q: Q,
    deploymentId: string,
    rows: { device_id: string; status: DeviceStatus; job_id: string | null; error_message: string | null }[],
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += 2000) {
      await q.raw(
        `UPDATE deployment_devices d SET status = r.status, job_id = COALESCE(r.job_id, d.job_id),
           error_message = COALESCE(r.error_message, d.error_message), status_since = now()
         FROM jsonb_to_recordset(?::jsonb) AS r(device_id uuid, status text, job_id uuid, error_message text)
         WHERE d.deployment_id = ? AND d.device_id = r.device_id`,
        [JSON.stringify(rows.slice(i, i + 2000)), deploymentId],
      );
    }
  }

  /** Moves every device of `from` states to `to` (one statement, optionally with a message); returns the device ids. */
  async moveDevices(
    q: Q,
    deploymentId: string,
    from: DeviceStatus[],
    to: DeviceStatus,
    extra: { withBackup?: boolean; errorMessage?: string } = {},
  ): Promise<string[]> {
    const query = q('deployment_devices').where({ deployment_id: deploymentId }).whereIn('status', from);
    if (extra.withBackup) query.whereNotNull('backup_config_id');
    const message = extra.errorMessage === undefined ? {} : { error_message: extra.errorMessage };
    const rows: { device_id: string }[] = await query
      .update({ status: to, status_since: q.fn.now(), job_id: null, ...message })
      .returning('device_id');
    return rows.map((r) => r.device_id);
  }

  /**
   * Recounts the devices by status and stores succeeded_count and failed_count, in one statement;
   * run it after locking the deployment row so the count sees every committed device.
   */
  async refreshCounts(q: Q, deploymentId: string, failedStates: DeviceStatus[]): Promise<Map<DeviceStatus, number>> {
    const { rows } = await q
      .raw(
        `WITH c AS (SELECT status, count(*)::int AS n FROM deployment_devices WHERE deployment_id = ? GROUP BY status)
       UPDATE deployments SET succeeded_count = coalesce((SELECT sum(n) FROM c WHERE status = 'completed'), 0),
         failed_count = coalesce((SELECT sum(n) FROM c WHERE status = ANY(?::text[])), 0), updated_at = now()
       WHERE id = ? RETURNING (SELECT coalesce(json_object_agg(status, n), '{}'::json) FROM c) AS counts`,
        [deploymentId, failedStates, deploymentId],
      )
      .options(PREPARED);
    const counts = (rows[0]?.counts ?? {}) as Record<string, number>;
    return new Map(Object.entries(counts) as [DeviceStatus, number][]);
  }

  /** How many completed devices of a deployment the push changed (the others already matched). */
  async changedCount(q: Q, deploymentId: string): Promise<number> {
    const [{ n }] = await q('deployment_devices')
      .where({ deployment_id: deploymentId, status: 'completed', changed: true })
      .count<{ n: number }[]>({ n: '*' });
    return Number(n);
  }

  /** The entries of some devices of a deployment, by device then push order. */
  entries(q: Q, deploymentId: string, deviceIds: string[]): Promise<EntryRow[]> {
    return q('deployment_entries')
      .where({ deployment_id: deploymentId })
      .whereRaw('device_id = ANY(?::uuid[])', [deviceIds])
      .orderBy([{ column: 'device_id' }, { column: 'service_order' }, { column: 'service_position' }])
      .select('*')
      .options(PREPARED);
  }

  /** The secret variable values a deployment's rendered configs hold (deployment_entries.secrets), each once. */
  async entrySecrets(deploymentId: string): Promise<string[]> {
    const { rows } = await this.db.raw<{ rows: { value: string }[] }>(
      'SELECT DISTINCT jsonb_array_elements_text(secrets) AS value FROM deployment_entries WHERE deployment_id = ? AND secrets IS NOT NULL',
      [deploymentId],
    );
    return rows.map((r) => r.value);
  }

  /** The target path of each entry of some devices of a deployment (what a scoped restore puts back). */
  targetPaths(q: Q, deploymentId: string, deviceIds: string[]): Promise<{ device_id: string; target_path: string | null }[]> {
    return q('deployment_entries')
      .where({ deployment_id: deploymentId })
      .whereRaw('device_id = ANY(?::uuid[])', [deviceIds])
      .select('device_id', 'target_path');
  }

  /** GET one deployment's devices array: one entry per device and service, in device then push order. */
  deviceEntries(deploymentId: string) {
    return this.db('deployment_entries as e')
      .join('deployment_devices as d', function join() {
        this.on('d.deployment_id', 'e.deployment_id').andOn('d.device_id', 'e.device_id');
      })
      .leftJoin('devices as dv', 'dv.id', 'e.device_id')
      .where('e.deployment_id', deploymentId)
      .orderBy([{ column: 'd.position' }, { column: 'e.service_order' }, { column: 'e.service_position' }])
      .select(
        'e.device_id',
        'd.device_name',
        'e.service_name',
        'e.service_order',
        'e.template_id',
        'd.status',
        'e.rendered_config',
        'e.target_path',
        'e.operation',
        'e.config_format',
        'd.backup_config_id',
        'd.error_message',
        'd.transport',
        'd.dry_run_diff',
        'dv.device_type',
      );
  }

  /** Appends log lines of a deployment (the statement recordDevices ends with). */
  async log(q: Q, deploymentId: string, orgId: string, lines: LogLine[]): Promise<void> {
    if (lines.length === 0) return;
    const batch: LogBatch = { deployment_id: deploymentId, org_id: orgId, device_id: null, job_id: null, lines };
    await q.raw(`WITH ${LOG_BATCHES} ${INSERT_LOGS}`, [logInput([batch])]).options(PREPARED);
  }

  /**
   * Writes device rows as outcomes left them (any deployments) and appends their log lines, in
   * one statement: batch by batch in the order given, a batch with a job id first getting that
   * job's agent lines (jobs area's table).
   */
  async recordDevices(trx: Knex.Transaction, rows: DeviceWrite[], batches: LogBatch[]): Promise<void> {
    if (rows.length === 0 && batches.length === 0) return;
    // Without lines, no insert: an insert of none still fires deployment_logs' statement trigger.
    const devices = JSON.stringify(rows);
    const [sql, params] =
      batches.length === 0
        ? [`WITH ${DEVICE_WRITES} ${UPDATE_DEVICES}`, [devices]]
        : [`WITH ${DEVICE_WRITES}, w AS (${UPDATE_DEVICES}), ${LOG_BATCHES} ${INSERT_LOGS}`, [devices, logInput(batches)]];
    await trx.raw(sql, params).options(PREPARED);
  }

  async logs(deploymentId: string, filter: { device_id?: string; limit: number; offset: number }) {
    const base = this.db('deployment_logs').where({ deployment_id: deploymentId });
    if (filter.device_id) base.where({ device_id: filter.device_id });
    const [{ total }] = await base.clone().count<{ total: number }[]>({ total: '*' });
    const logs = await base.orderBy('id').limit(filter.limit).offset(filter.offset).select('id', 'level', 'message', 'device_id', 'created_at');
    return { logs, total: Number(total) };
  }

  // ---- reads of other areas' tables ------------------------------------------------------

  /**
   * The newest job of each kind this deployment submitted for each of `deviceIds` since the
   * device's status_since (adopted after a crash between submit and record).
   */
  async submittedJobs(trx: Knex.Transaction, deploymentId: string, deviceIds: string[]): Promise<{ id: string; device_id: string; kind: string }[]> {
    if (deviceIds.length === 0) return [];
    const { rows } = await trx
      .raw(
        `SELECT DISTINCT ON (j.device_id, j.kind) j.id, j.device_id, j.kind
         FROM jobs j JOIN deployment_devices d ON d.deployment_id = j.group_id AND d.device_id = j.device_id
        WHERE j.group_id = ? AND j.device_id = ANY(?::uuid[]) AND j.created_at >= d.status_since
        ORDER BY j.device_id, j.kind, j.created_at DESC, j.id`,
        [deploymentId, deviceIds],
      )
      .options(PREPARED);
    return rows;
  }

  /** Pre-deployment backups: successful config versions, so their format and transport are real ones. */
  async backupConfigs(q: Q, configIds: string[]): Promise<Map<string, StoredBackup>> {
    if (configIds.length === 0) return new Map();
    const rows = await q('config_versions').whereRaw('id = ANY(?::uuid[])', [configIds]).select('id', 'config_text', 'config_format', 'pulled_via');
    return new Map(rows.map((r: StoredBackup & { id: string }) => [r.id, r]));
  }

  // ---- recovery sweep --------------------------------------------------------------------

  /** Deployments needing a push of the pump: pending ones, and ones with queued devices. */
  async needingPump(olderThanMs: number): Promise<string[]> {
    const cutoff = new Date(Date.now() - olderThanMs);
    const pending: { id: string }[] = await this.db('deployments')
      .where({ status: 'pending' })
      .where('created_at', '<', cutoff)
      .limit(200)
      .select('id');
    const queued: { id: string }[] = await this.db('deployment_devices as d')
      .join('deployments as p', 'p.id', 'd.deployment_id')
      .whereIn('p.status', ['in_progress', 'rolling_back'])
      .whereIn('d.status', QUEUED)
      .where('d.status_since', '<', cutoff)
      .distinct('d.deployment_id as id')
      .limit(200);
    return [...new Set([...pending, ...queued].map((r) => r.id))];
  }

  /** Deployments with devices claimed long ago that never got their job id recorded. */
  async unclaimedRuns(olderThanMs: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db('deployment_devices')
      .whereIn('status', RUNNING)
      .whereNull('job_id')
      .where('status_since', '<', new Date(Date.now() - olderThanMs))
      .distinct('deployment_id as id')
      .limit(200);
    return rows.map((r) => r.id);
  }

  /** Running devices whose job is final although the device row did not hear of it. */
  orphanedOutcomes(olderThanMs: number): Promise<JobRow[]> {
    const cutoff = new Date(Date.now() - olderThanMs);
    return this.db('deployment_devices as d')
      .join('jobs as j', 'j.id', 'd.job_id')
      .whereIn('d.status', RUNNING)
      .whereIn('j.status', ['succeeded', 'failed'])
      .where('j.finished_at', '<', cutoff)
      .limit(200)
      .select('j.*');
  }

  /** Open deployments with no device left to run: they only need settling. */
  async unsettled(): Promise<string[]> {
    const rows: { id: string }[] = await this.db('deployments as p')
      .whereIn('p.status', ['in_progress', 'rolling_back'])
      .whereNotExists(function open() {
        this.from('deployment_devices as d')
          .whereRaw('d.deployment_id = p.id')
          .whereIn('d.status', [...QUEUED, ...RUNNING]);
      })
      .where('p.updated_at', '<', new Date(Date.now() - 5_000))
      .limit(200)
      .select('p.id');
    return rows.map((r) => r.id);
  }
}
