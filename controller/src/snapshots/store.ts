import type { Knex } from 'knex';
import type { Db } from '../db/knex';

export const SNAPSHOT_COLUMNS = [
  'id', 'org_id', 'name', 'device_filter', 'method', 'status', 'total_devices', 'successful_devices', 'failed_devices',
  'timeout_seconds', 'started_at', 'completed_at', 'created_by', 'created_by_name', 'created_at', 'updated_at',
] as const;

export type SnapshotStatus = 'pending' | 'collecting' | 'completed' | 'partial' | 'failed';

export interface SnapshotRow {
  id: string;
  org_id: string;
  name: string;
  device_filter: { site_id?: string; device_type?: string; device_ids?: string[] };
  method: string;
  status: SnapshotStatus;
  total_devices: number;
  successful_devices: number;
  failed_devices: number;
  timeout_seconds: number | null;
  started_at: Date | null;
  completed_at: Date | null;
  created_by: string | null;
  created_by_name: string;
  created_at: Date;
  updated_at: Date;
}

/** One device of a collection run, as the run starts it. */
export interface RunDevice {
  device_id: string;
  device_name: string;
  methods: string[];
  structured_transport: string | null;
  /** Set when the device fails before any job (e.g. structured asked without a transport). */
  error_message?: string | null;
}

/** What a run ends as, from its device counts. */
const FINAL_STATUS = `CASE WHEN s.failed_devices = 0 THEN 'completed' WHEN s.successful_devices = 0 THEN 'failed' ELSE 'partial' END`;

/** The only SQL of snapshots: the snapshot rows and the per-device rows of their runs. */
export class SnapshotStore {
  constructor(private readonly db: Db) {}

  async list(orgId: string, limit: number, offset: number) {
    const base = this.db('snapshots').where({ org_id: orgId });
    const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
    const snapshots = await base.select(SNAPSHOT_COLUMNS).orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset);
    return { snapshots, total: Number(count) };
  }

  get(orgId: string, id: string, q: Db | Knex.Transaction = this.db): Promise<SnapshotRow | undefined> {
    return q('snapshots').where({ org_id: orgId, id }).first(SNAPSHOT_COLUMNS);
  }

  async insert(row: Record<string, unknown>): Promise<SnapshotRow> {
    const [snapshot] = await this.db('snapshots').insert(row).returning(SNAPSHOT_COLUMNS);
    return snapshot;
  }

  async delete(orgId: string, id: string): Promise<boolean> {
    return (await this.db('snapshots').where({ org_id: orgId, id }).delete()) > 0;
  }

  siteExists(orgId: string, siteId: string) {
    return this.db('sites').where({ org_id: orgId, id: siteId }).first('id');
  }

  /**
   * Starts a run in one transaction: locks the snapshot, refuses while one is collecting,
   * replaces (full run) or resets (recollect) the device rows and sets counts and deadline.
   * `devices(current)` picks the run's devices once the lock is held. Returns null when busy.
   */
  async startRun(
    orgId: string,
    id: string,
    timeoutSeconds: number,
    devices: (trx: Knex.Transaction, snapshot: SnapshotRow) => Promise<RunDevice[]>,
    mode: 'full' | 'failed_only',
  ): Promise<{ snapshot: SnapshotRow; devices: RunDevice[]; planned: number } | 'busy' | 'not_found'> {
    return this.db.transaction(async (trx) => {
      const snapshot: SnapshotRow | undefined = await trx('snapshots').where({ org_id: orgId, id }).forUpdate().first(SNAPSHOT_COLUMNS);
      if (!snapshot) return 'not_found';
      if (snapshot.status === 'collecting') return 'busy';
      const chosen = await devices(trx, snapshot);
      if (chosen.length === 0) return { snapshot, devices: [], planned: 0 };
      const rows = chosen.map((d) => ({
        snapshot_id: id,
        device_id: d.device_id,
        device_name: d.device_name,
        methods: d.methods,
        structured_transport: d.structured_transport,
        status: d.error_message ? 'failed' : 'pending',
        error_message: d.error_message ?? null,
        job_id: null,
        updated_at: trx.fn.now(),
      }));
      if (mode === 'full') {
        await trx('snapshot_devices').where({ snapshot_id: id }).delete();
        for (let i = 0; i < rows.length; i += 1000) await trx('snapshot_devices').insert(rows.slice(i, i + 1000));
      } else {
        for (let i = 0; i < rows.length; i += 1000) {
          await trx('snapshot_devices').insert(rows.slice(i, i + 1000)).onConflict(['snapshot_id', 'device_id'])
            .merge({ ...Object.fromEntries(['methods', 'structured_transport', 'status', 'error_message', 'job_id', 'updated_at', 'device_name'].map((c) => [c, trx.raw(`EXCLUDED.${c}`)])), attempts: trx.raw('snapshot_devices.attempts + 1') });
        }
      }
      const failedNow = rows.filter((r) => r.status === 'failed').length;
      const counts = mode === 'full'
        ? { total_devices: rows.length, successful_devices: 0, failed_devices: failedNow }
        : { failed_devices: trx.raw('(SELECT count(*) FROM snapshot_devices WHERE snapshot_id = ? AND status = ?)', [id, 'failed']) };
      const [updated] = await trx('snapshots')
        .where({ id })
        .update({
          ...counts,
          status: 'collecting',
          timeout_seconds: timeoutSeconds,
          started_at: trx.fn.now(),
          completed_at: null,
          deadline_at: trx.raw('now() + make_interval(secs => ?)', [timeoutSeconds]),
          updated_at: trx.fn.now(),
        })
        .returning(SNAPSHOT_COLUMNS);
      return { snapshot: (await this.finishIfDone(trx, id)) ?? updated, devices: chosen.filter((d) => !d.error_message), planned: chosen.length };
    });
  }

  /** Failed devices of a snapshot that still exist, for recollect-failed. */
  failedDevices(trx: Knex.Transaction, snapshotId: string): Promise<{ device_id: string }[]> {
    return trx('snapshot_devices as sd')
      .join('devices as d', 'd.id', 'sd.device_id')
      .where({ 'sd.snapshot_id': snapshotId, 'sd.status': 'failed' })
      .select('sd.device_id');
  }

  async setJobIds(snapshotId: string, pairs: Array<{ device_id: string; job_id: string }>) {
    if (pairs.length === 0) return;
    await this.db.raw(
      `UPDATE snapshot_devices sd SET job_id = v.job_id::uuid FROM (SELECT unnest(?::uuid[]) AS device_id, unnest(?::text[]) AS job_id) v
       WHERE sd.snapshot_id = ? AND sd.device_id = v.device_id AND sd.job_id IS NULL`,
      [pairs.map((p) => p.device_id), pairs.map((p) => p.job_id), snapshotId],
    );
  }

  /** The run row of a device, locked, when `snapshotId` is a snapshot; null otherwise. */
  lockRunDevice(trx: Knex.Transaction, snapshotId: string, deviceId: string): Promise<{ status: string; methods: string[]; structured_transport: string | null } | undefined> {
    return trx('snapshot_devices').where({ snapshot_id: snapshotId, device_id: deviceId }).forUpdate().first('status', 'methods', 'structured_transport');
  }

  /**
   * Records one device's result exactly once (only a pending row changes) and moves the counts
   * with increments, which stay right when many devices finish at the same moment.
   */
  async recordDevice(trx: Knex.Transaction, snapshotId: string, deviceId: string, jobId: string | null, ok: boolean, error: string | null): Promise<void> {
    const changed = await trx('snapshot_devices')
      .where({ snapshot_id: snapshotId, device_id: deviceId, status: 'pending' })
      // A late outcome of an earlier run's job never lands on the current run.
      .where((q) => (jobId ? q.whereNull('job_id').orWhere('job_id', jobId) : q))
      .update({ status: ok ? 'success' : 'failed', error_message: ok ? null : error, job_id: jobId, updated_at: trx.fn.now() });
    if (changed === 0) return;
    await trx('snapshots')
      .where({ id: snapshotId })
      .increment(ok ? 'successful_devices' : 'failed_devices', 1)
      .update({ updated_at: trx.fn.now() });
    await this.finishIfDone(trx, snapshotId);
  }

  /** Fails devices that never got a job (submit refused), so the run still ends. */
  async failDevices(snapshotId: string, deviceIds: string[], reason: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const changed = await trx('snapshot_devices')
        .where({ snapshot_id: snapshotId, status: 'pending' })
        .whereIn('device_id', deviceIds)
        .update({ status: 'failed', error_message: reason, updated_at: trx.fn.now() });
      await trx('snapshots').where({ id: snapshotId }).increment('failed_devices', changed);
      await this.finishIfDone(trx, snapshotId);
    });
  }

  /** Ends a collecting run whose devices have all reported. */
  private async finishIfDone(trx: Knex.Transaction, snapshotId: string): Promise<SnapshotRow | undefined> {
    const [row] = await trx('snapshots as s')
      .where('s.id', snapshotId)
      .where('s.status', 'collecting')
      .whereRaw('s.successful_devices + s.failed_devices >= s.total_devices')
      .update({ status: trx.raw(FINAL_STATUS), completed_at: trx.fn.now(), updated_at: trx.fn.now() })
      .returning(SNAPSHOT_COLUMNS.map((c) => `s.${c}`));
    return row;
  }

  /**
   * Ends runs past their deadline: devices still pending fail with the reason, and the run
   * ends partial or failed. Safe to run from every controller at once.
   */
  async sweepExpired(graceSeconds: number): Promise<number> {
    return this.db.transaction(async (trx) => {
      const expired: { id: string }[] = await trx('snapshots')
        .where('status', 'collecting')
        .whereRaw('deadline_at + make_interval(secs => ?) < now()', [graceSeconds])
        .forUpdate()
        .skipLocked()
        .select('id');
      for (const { id } of expired) {
        const pending = await trx('snapshot_devices')
          .where({ snapshot_id: id, status: 'pending' })
          .update({ status: 'failed', error_message: 'No result before the snapshot deadline (timeout_seconds); the device or its agent did not answer in time', updated_at: trx.fn.now() });
        await trx('snapshots').where({ id }).increment('failed_devices', pending);
        await this.finishIfDone(trx, id);
      }
      return expired.length;
    });
  }

  /** Per-device entries of the latest run: one per stored version, or the device's state. */
  backups(orgId: string, snapshotId: string) {
    return this.db('snapshot_devices as sd')
      .join('snapshots as s', 's.id', 'sd.snapshot_id')
      .leftJoin('config_versions as v', (j) => j.on('v.snapshot_id', 'sd.snapshot_id').andOn('v.device_id', 'sd.device_id').andOn('v.job_id', 'sd.job_id'))
      .where({ 's.org_id': orgId, 'sd.snapshot_id': snapshotId })
      .orderBy('sd.device_name')
      .orderBy('v.version')
      .select(
        'v.id as config_id', 'sd.device_id', 'sd.device_name', 'v.version', 'v.size_bytes', 'v.line_count',
        this.db.raw('COALESCE(v.method, sd.methods[1]) AS backup_method'), 'v.pulled_via', 'v.config_hash',
        this.db.raw('COALESCE(v.status, sd.status) AS status'),
        this.db.raw('CASE WHEN v.id IS NULL THEN sd.error_message ELSE v.error_message END AS error_message'),
        'sd.attempts', this.db.raw('COALESCE(v.created_at, sd.updated_at) AS created_at'),
      );
  }
}
