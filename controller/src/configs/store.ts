import type { Knex } from 'knex';
import type { StructuredTransport } from '../../../shared/src/device/values';
import { PREPARED, type Db } from '../db/knex';

/** Columns of a stored config version as the API shows it in lists (no text, no transcript). */
export const VERSION_COLUMNS = [
  'id',
  'device_id',
  'version',
  'method',
  'config_format',
  'config_hash',
  'source',
  'pulled_via',
  'status',
  'error_message',
  'snapshot_id',
  'notes',
  'notes_by',
  'size_bytes',
  'line_count',
  'created_at',
] as const;

/** A device as config backups see it: identity plus the profile facts a backup needs. */
export interface BackupDevice {
  id: string;
  org_id: string;
  name: string;
  device_type: string;
  site_id: string | null;
  profile_id: string;
  automation_transport: StructuredTransport | null;
}

/** One version to store; the store numbers it. */
export interface NewVersion {
  org_id: string;
  device_id: string;
  method: 'cli' | 'structured';
  config_format: string;
  pulled_via: string;
  source: string;
  status: 'success' | 'failed';
  error_message: string | null;
  snapshot_id: string | null;
  job_id: string | null;
  config_text: string;
  config_hash: string;
  size_bytes: number;
  line_count: number;
  transcript: string;
}

/** Columns a new version is written with, and their SQL types. */
const VERSION_INPUT: Array<[keyof NewVersion, string]> = [
  ['org_id', 'uuid'],
  ['device_id', 'uuid'],
  ['method', 'text'],
  ['config_format', 'text'],
  ['pulled_via', 'text'],
  ['source', 'text'],
  ['status', 'text'],
  ['error_message', 'text'],
  ['snapshot_id', 'uuid'],
  ['job_id', 'uuid'],
  ['config_text', 'text'],
  ['config_hash', 'text'],
  ['size_bytes', 'int'],
  ['line_count', 'int'],
  ['transcript', 'text'],
];

/** The columns a new version is written with, in VERSION_INPUT order, and with their SQL types (a jsonb_to_recordset column list). */
export const NEW_VERSION_COLUMNS = VERSION_INPUT.map(([name]) => name);
export const newVersionRecord = (except: (keyof NewVersion)[] = []) =>
  VERSION_INPUT.filter(([name]) => !except.includes(name))
    .map(([name, type]) => `${name} ${type}`)
    .join(', ');

/**
 * CTEs n and c: each device's next version numbers for the rows of CTE `source` (a device's
 * rows numbered by `ord` from 1), taken from its counter in one upsert, in device order.
 */
export function versionNumbering(source: string): string {
  return `n AS (SELECT device_id, count(*)::int AS n FROM ${source} GROUP BY device_id),
            c AS (
              INSERT INTO config_version_counters AS c (device_id, last_version) SELECT device_id, n FROM n ORDER BY device_id
              ON CONFLICT (device_id) DO UPDATE SET last_version = c.last_version + EXCLUDED.last_version
              RETURNING device_id, last_version)`;
}

/** The insert of CTE `source`'s rows (NEW_VERSION_COLUMNS, ord, and i for their order) as versions numbered by versionNumbering; add RETURNING. */
export function insertVersionsOf(source: string): string {
  return `INSERT INTO config_versions (${NEW_VERSION_COLUMNS.join(', ')}, version)
       SELECT ${NEW_VERSION_COLUMNS.map((name) => `${source}.${name}`).join(', ')}, c.last_version - n.n + ${source}.ord
         FROM ${source} JOIN n USING (device_id) JOIN c USING (device_id)
        ORDER BY ${source}.i`;
}

export interface RunPlan {
  methods: string[];
  structured_transport: StructuredTransport | null;
}

export interface BackupContext {
  facts: MaskingFacts;
  /** The device's row in the snapshot run the job belongs to. */
  run: RunPlan | null;
  /** The single pull the job belongs to. */
  pull: RunPlan | null;
}

/** What masking a device's text needs: its dialect and its profile's sealed credentials. */
export interface MaskingFacts {
  device_type: string | null;
  password_enc: string | null;
  private_key_enc: string | null;
  enable_password_enc: string | null;
}

export interface PullRequestRow {
  id: string;
  org_id: string;
  device_id: string;
  methods: string[];
  structured_transport: StructuredTransport | null;
}

const FACT_COLUMNS = ['d.device_type', 'p.password_enc', 'p.private_key_enc', 'p.enable_password_enc'];
const DEVICE_COLUMNS = ['d.id', 'd.org_id', 'd.name', 'd.device_type', 'd.site_id', 'd.profile_id', 'p.automation_transport'];

interface ContextRow extends MaskingFacts {
  run_methods: string[] | null;
  run_transport: StructuredTransport | null;
  pull_methods: string[] | null;
  pull_transport: StructuredTransport | null;
}

function contextOf(row: ContextRow): BackupContext {
  return {
    facts: {
      device_type: row.device_type,
      password_enc: row.password_enc,
      private_key_enc: row.private_key_enc,
      enable_password_enc: row.enable_password_enc,
    },
    run: row.run_methods ? { methods: row.run_methods, structured_transport: row.run_transport } : null,
    pull: row.pull_methods ? { methods: row.pull_methods, structured_transport: row.pull_transport } : null,
  };
}

/** The only SQL of config backups: versions, their numbering, pull requests and device reads. */
export class ConfigStore {
  constructor(private readonly db: Db) {}

  private devices(q: Db | Knex.Transaction = this.db) {
    return q('devices as d').join('connection_profiles as p', 'p.id', 'd.profile_id');
  }

  findDevice(orgId: string, deviceId: string): Promise<BackupDevice | undefined> {
    return this.devices().where({ 'd.org_id': orgId, 'd.id': deviceId }).first(DEVICE_COLUMNS);
  }

  findDevices(orgId: string, deviceIds: string[], q: Db | Knex.Transaction = this.db): Promise<BackupDevice[]> {
    return this.devices(q).where('d.org_id', orgId).whereIn('d.id', deviceIds).orderBy('d.name').select(DEVICE_COLUMNS);
  }

  /** Devices matching a snapshot filter ({site_id, device_type} or {device_ids}); empty means all. */
  matchDevices(
    orgId: string,
    filter: { site_id?: string; device_type?: string; device_ids?: string[] },
    q: Db | Knex.Transaction = this.db,
  ): Promise<BackupDevice[]> {
    const query = this.devices(q).where('d.org_id', orgId);
    if (filter.site_id) query.where('d.site_id', filter.site_id);
    if (filter.device_type) query.where('d.device_type', filter.device_type);
    if (filter.device_ids) query.whereIn('d.id', filter.device_ids);
    return query.orderBy('d.name').select(DEVICE_COLUMNS);
  }

  /**
   * A device's masking facts (for masking a transcript as it is stored), or undefined when the
   * device is gone. FOR KEY SHARE keeps the device from being deleted until the transaction ends.
   */
  lockMaskingFacts(trx: Knex.Transaction, orgId: string, deviceId: string): Promise<MaskingFacts | undefined> {
    return this.factsQuery(orgId, deviceId, trx).forKeyShare('d');
  }

  /** A device's masking facts (for masking its text as it is read), or undefined when the device is gone. */
  maskingFacts(orgId: string, deviceId: string): Promise<MaskingFacts | undefined> {
    return this.factsQuery(orgId, deviceId, this.db);
  }

  private factsQuery(orgId: string, deviceId: string, q: Db | Knex.Transaction) {
    return this.devices(q)
      .where({ 'd.id': deviceId, 'd.org_id': orgId })
      .first(...FACT_COLUMNS);
  }

  /** Many devices' masking facts by device id, in one query (= ANY: a deployment may have thousands); gone devices are absent. */
  async maskingFactsOf(orgId: string, deviceIds: string[]): Promise<Map<string, MaskingFacts>> {
    const rows: (MaskingFacts & { id: string })[] = await this.devices()
      .where('d.org_id', orgId)
      .whereRaw('d.id = ANY(?::uuid[])', [deviceIds])
      .select('d.id', ...FACT_COLUMNS);
    return new Map(rows.map(({ id, ...facts }) => [id, facts]));
  }

  /**
   * What recording backup outcomes needs, in one round trip, answered in their order: each
   * device's masking facts (the device row key-share locked, in id order, so it cannot be
   * deleted mid-transaction) and, when the job belongs to a snapshot run or a single pull, what
   * that run asked for. Undefined where the device is gone.
   */
  async backupContexts(
    trx: Knex.Transaction,
    keys: { orgId: string; deviceId: string; groupId: string | null }[],
  ): Promise<(BackupContext | undefined)[]> {
    if (keys.length === 0) return [];
    const { rows } = await trx
      .raw(
        // Devices by key (= ANY): joined against the recordset's default estimate of 100 rows, a
        // fleet of thousands was scanned whole for every batch of results. The run's row of each
        // device by its whole key, a LATERAL per device: as a join, the index scan took the run's
        // id alone and read every device row of the snapshot for each device (0.27 ms a device
        // in a snapshot of 1,000; the time grows with the snapshot).
        `WITH i AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS i(ord int, org_id uuid, device_id uuid, group_id uuid))
       SELECT i.ord, d.device_type, p.password_enc, p.private_key_enc, p.enable_password_enc,
              sd.methods AS run_methods, sd.structured_transport AS run_transport,
              cp.methods AS pull_methods, cp.structured_transport AS pull_transport
         FROM i
         JOIN devices d ON d.id = i.device_id AND d.org_id = i.org_id
         JOIN connection_profiles p ON p.id = d.profile_id
         LEFT JOIN LATERAL (SELECT sd.methods, sd.structured_transport FROM snapshot_devices sd
                             WHERE sd.snapshot_id = i.group_id AND sd.device_id = d.id LIMIT 1) sd ON true
         LEFT JOIN LATERAL (SELECT cp.methods, cp.structured_transport FROM config_pulls cp
                             WHERE cp.id = i.group_id AND cp.device_id = d.id LIMIT 1) cp ON true
        WHERE d.id = ANY(ARRAY(SELECT device_id FROM i))
        ORDER BY d.id
          FOR KEY SHARE OF d`,
        [JSON.stringify(keys.map((k, ord) => ({ ord, org_id: k.orgId, device_id: k.deviceId, group_id: k.groupId })))],
      )
      .options(PREPARED);
    const contexts: (BackupContext | undefined)[] = keys.map(() => undefined);
    for (const row of rows) contexts[row.ord] = contextOf(row);
    return contexts;
  }

  /**
   * Stores versions, of one device or many, in one statement: each device's rows get
   * consecutive numbers from its counter row. The counter rows' locks (taken in device order,
   * so concurrent writers queue rather than deadlock) serialize writers of the same device
   * until their transaction ends, so numbers never clash. Answers the stored rows in input order.
   */
  async insertVersions(
    trx: Knex.Transaction,
    rows: NewVersion[],
  ): Promise<{ id: string; device_id: string; version: number; method: string; status: string }[]> {
    if (rows.length === 0) return [];
    const seen = new Map<string, number>();
    const input = rows.map((row, i) => {
      const ord = (seen.get(row.device_id) ?? 0) + 1;
      seen.set(row.device_id, ord);
      return { ...row, ord, i };
    });
    const { rows: stored } = await trx
      .raw(
        `WITH r AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(i int, ord int, ${newVersionRecord()})),
            ${versionNumbering('r')}
       ${insertVersionsOf('r')}
        RETURNING id, device_id, version, method, status`,
        [JSON.stringify(input)],
      )
      .options(PREPARED);
    return stored;
  }

  async listVersions(orgId: string, deviceId: string, limit: number, offset: number) {
    const base = this.db('config_versions').where({ org_id: orgId, device_id: deviceId });
    const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
    const configs = await base.select(VERSION_COLUMNS).orderBy('version', 'desc').limit(limit).offset(offset);
    return { configs, total: Number(count) };
  }

  /** One version with its text; `version` null means the newest. */
  getVersion(orgId: string, deviceId: string, version: number | null) {
    const q = this.db('config_versions').where({ org_id: orgId, device_id: deviceId });
    if (version === null) q.orderBy('version', 'desc');
    else q.where({ version });
    return q.first([...VERSION_COLUMNS, 'config_text']);
  }

  versionsOfJob(jobId: string) {
    return this.db('config_versions').where({ job_id: jobId }).orderBy('version').select(VERSION_COLUMNS);
  }

  async setNotes(orgId: string, deviceId: string, version: number, notes: string, by: string) {
    const [row] = await this.db('config_versions')
      .where({ org_id: orgId, device_id: deviceId, version })
      .update({ notes, notes_by: by })
      .returning(VERSION_COLUMNS);
    return row;
  }

  transcript(orgId: string, configId: string): Promise<{ transcript: string; device_id: string; job_id: string | null } | undefined> {
    return this.db('config_versions').where({ org_id: orgId, id: configId }).first('transcript', 'device_id', 'job_id');
  }

  /** The configs one backup job stored as successful versions of its device (a transcript's placeholders). */
  jobConfigs(orgId: string, deviceId: string, jobId: string | null): Promise<{ method: string; config_text: string }[]> {
    if (jobId === null) return Promise.resolve([]);
    return this.db('config_versions').where({ org_id: orgId, device_id: deviceId, job_id: jobId, status: 'success' }).select('method', 'config_text');
  }

  async insertPullRequest(row: Omit<PullRequestRow, 'id'> & { requested_by: string; requested_by_name: string }): Promise<string> {
    const [{ id }] = await this.db('config_pulls').insert(row).returning('id');
    return id as string;
  }

  setPullJob(id: string, jobId: string) {
    return this.db('config_pulls').where({ id }).update({ job_id: jobId });
  }

  /**
   * Devices of an organization with their newest version and newest successful backup. The
   * versions are built as JSON here, so their times are formatted here too (UTC, as everywhere).
   */
  async devicesWithBackupInfo(orgId: string, filter: { site_id?: string; device_type?: string }, limit: number, offset: number) {
    const base = this.db('devices as d').where('d.org_id', orgId);
    if (filter.site_id) base.where('d.site_id', filter.site_id);
    if (filter.device_type) base.where('d.device_type', filter.device_type);
    const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
    const lateral = (alias: string, onlySuccess: boolean) =>
      `LEFT JOIN LATERAL (SELECT v.id, v.version, v.status, v.method, v.config_format, v.config_hash, v.size_bytes,
         v.line_count, v.error_message, to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at FROM config_versions v
         WHERE v.device_id = d.id${onlySuccess ? " AND v.status = 'success'" : ''} ORDER BY v.version DESC LIMIT 1) ${alias} ON true`;
    const rows = await base
      .joinRaw(lateral('lb', false))
      .joinRaw(lateral('ls', true))
      .leftJoin('config_version_counters as c', 'c.device_id', 'd.id')
      .select('d.id', 'd.name', 'd.host', 'd.device_type', 'd.site_id', 'd.site', 'd.profile_id')
      .select(this.db.raw('CASE WHEN lb.id IS NULL THEN NULL ELSE row_to_json(lb) END AS last_backup'))
      .select(this.db.raw('CASE WHEN ls.id IS NULL THEN NULL ELSE row_to_json(ls) END AS last_successful_backup'))
      .select(this.db.raw('COALESCE(c.last_version, 0) AS backup_count'))
      .orderBy('d.name')
      .limit(limit)
      .offset(offset);
    return { devices: rows, total: Number(count) };
  }
}
