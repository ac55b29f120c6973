import type { Knex } from 'knex';
import { PREPARED, type Db } from '../db/knex';

export const SNAPSHOT_COLUMNS = [
  'id',
  'org_id',
  'name',
  'device_filter',
  'method',
  'status',
  'total_devices',
  'successful_devices',
  'failed_devices',
  'timeout_seconds',
  'started_at',
  'completed_at',
  'created_by',
  'created_by_name',
  'created_at',
  'updated_at',
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
}

/** What a run ends as, from its device counts (c.ok, c.failed). */
const FINAL_STATUS = `CASE WHEN c.failed = 0 THEN 'completed' WHEN c.ok = 0 THEN 'failed' ELSE 'partial' END`;

/** Device counts of a collecting run; evaluated only for collecting snapshots. */
const RUN_COUNTS = `LEFT JOIN LATERAL (
  SELECT count(*) FILTER (WHERE sd.status = 'success')::int AS ok, count(*) FILTER (WHERE sd.status = 'failed')::int AS failed,
         count(*) FILTER (WHERE sd.status = 'pending')::int AS pending, max(sd.updated_at) AS last
  FROM snapshot_devices sd WHERE sd.snapshot_id = s.id AND s.status = 'collecting') c ON true`;

/**
 * A snapshot as the API shows it. A collecting run's counts and status are read live from its
 * device rows, so recording one device never touches (or waits on) the snapshot row; the row
 * itself is brought up to date once, when the run ends (tryFinish, the sweeper).
 */
const LIVE_COLUMNS = [
  's.id',
  's.org_id',
  's.name',
  's.device_filter',
  's.method',
  `CASE WHEN s.status = 'collecting' AND c.pending = 0 THEN ${FINAL_STATUS} ELSE s.status END AS status`,
  's.total_devices',
  `CASE WHEN s.status = 'collecting' THEN c.ok ELSE s.successful_devices END AS successful_devices`,
  `CASE WHEN s.status = 'collecting' THEN c.failed ELSE s.failed_devices END AS failed_devices`,
  's.timeout_seconds',
  's.started_at',
  `CASE WHEN s.status = 'collecting' AND c.pending = 0 THEN c.last ELSE s.completed_at END AS completed_at`,
  's.created_by',
  's.created_by_name',
  's.created_at',
  's.updated_at',
].join(', ');

/** Past its deadline by this much, a snapshot fails its pending devices even while their jobs are open. */
const OPEN_JOB_LIMIT_SECONDS = 600;

const DEADLINE_REASON = 'No result before the snapshot deadline (timeout_seconds); the device or its agent did not answer in time';

/** The only SQL of snapshots: the snapshot rows and the per-device rows of their runs. */
export class SnapshotStore {
  constructor(private readonly db: Db) {}

  private live(q: Db | Knex.Transaction = this.db) {
    return q('snapshots as s').joinRaw(RUN_COUNTS).select(q.raw(LIVE_COLUMNS));
  }

  async list(orgId: string, limit: number, offset: number) {
    const [{ count }] = await this.db('snapshots').where({ org_id: orgId }).count<{ count: number }[]>({ count: '*' });
    const snapshots = await this.live().where('s.org_id', orgId).orderBy('s.created_at', 'desc').orderBy('s.id').limit(limit).offset(offset);
    return { snapshots, total: Number(count) };
  }

  async get(orgId: string, id: string, q: Db | Knex.Transaction = this.db): Promise<SnapshotRow | undefined> {
    const [row] = await this.live(q).where({ 's.org_id': orgId, 's.id': id });
    return row;
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
  ): Promise<{ snapshot: SnapshotRow; devices: RunDevice[] } | 'busy' | 'not_found'> {
    return this.db.transaction(async (trx) => {
      if (!(await trx('snapshots').where({ org_id: orgId, id }).forUpdate().first('id'))) return 'not_found';
      // A run whose devices have all reported is over even if nobody has closed it yet.
      await this.tryFinish(trx, id);
      const snapshot = (await this.get(orgId, id, trx)) as SnapshotRow;
      if (snapshot.status === 'collecting') return 'busy';
      const chosen = await devices(trx, snapshot);
      if (chosen.length === 0) return { snapshot, devices: [] };
      const rows = chosen.map((d) => ({
        snapshot_id: id,
        device_id: d.device_id,
        device_name: d.device_name,
        methods: d.methods,
        structured_transport: d.structured_transport,
        status: 'pending',
        error_message: null,
        job_id: null,
        updated_at: trx.fn.now(),
      }));
      if (mode === 'full') {
        await trx('snapshot_devices').where({ snapshot_id: id }).delete();
        for (let i = 0; i < rows.length; i += 1000) await trx('snapshot_devices').insert(rows.slice(i, i + 1000));
      } else {
        for (let i = 0; i < rows.length; i += 1000) {
          await trx('snapshot_devices')
            .insert(rows.slice(i, i + 1000))
            .onConflict(['snapshot_id', 'device_id'])
            .merge({
              ...Object.fromEntries(
                ['methods', 'structured_transport', 'status', 'error_message', 'job_id', 'updated_at', 'device_name'].map((c) => [
                  c,
                  trx.raw(`EXCLUDED.${c}`),
                ]),
              ),
              attempts: trx.raw('snapshot_devices.attempts + 1'),
            });
        }
      }
      await trx('snapshots')
        .where({ id })
        .update({
          ...(mode === 'full' ? { total_devices: rows.length } : {}),
          status: 'collecting',
          timeout_seconds: timeoutSeconds,
          started_at: trx.fn.now(),
          completed_at: null,
          deadline_at: trx.raw('now() + make_interval(secs => ?)', [timeoutSeconds]),
          updated_at: trx.fn.now(),
        });
      return { snapshot: (await this.get(orgId, id, trx)) as SnapshotRow, devices: chosen };
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

  /**
   * Records devices' results exactly once: only a pending row of the current run changes.
   * Touches no shared row, so devices of one run record side by side; the last one ends the run.
   */
  async recordDevices(
    trx: Knex.Transaction,
    results: { snapshotId: string; deviceId: string; jobId: string | null; ok: boolean; error: string | null }[],
  ): Promise<void> {
    if (results.length === 0) return;
    // One round trip: the updates, and which runs they touched have no other device pending
    // (the statement's snapshot still shows the updated rows as pending, hence the anti-join).
    // The results come as arrays: planned against unnest's count, each row is found by its key;
    // against jsonb_to_recordset's default of 100 rows the planner read every pending row of the
    // run for each batch (4,146 rows for 31 results, 6 of 7 ms; a run of n devices cost n² / batch).
    const { rows } = await trx
      .raw(
        `WITH u AS (
         UPDATE snapshot_devices sd SET status = i.status, error_message = i.error, job_id = COALESCE(i.job_id, sd.job_id), updated_at = now()
           FROM unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::text[], ?::text[]) AS i(snapshot_id, device_id, job_id, status, error)
          WHERE sd.snapshot_id = i.snapshot_id AND sd.device_id = i.device_id AND sd.status = 'pending'
            AND (i.job_id IS NULL OR sd.job_id IS NULL OR sd.job_id = i.job_id) -- a late outcome of an earlier run's job never lands on this run
          RETURNING sd.snapshot_id, sd.device_id)
       SELECT DISTINCT u.snapshot_id FROM u
        WHERE NOT EXISTS (
          SELECT 1 FROM snapshot_devices p
           WHERE p.snapshot_id = u.snapshot_id AND p.status = 'pending'
             AND NOT EXISTS (SELECT 1 FROM u done WHERE done.snapshot_id = p.snapshot_id AND done.device_id = p.device_id))`,
        [
          results.map((r) => r.snapshotId),
          results.map((r) => r.deviceId),
          results.map((r) => r.jobId),
          results.map((r) => (r.ok ? 'success' : 'failed')),
          results.map((r) => (r.ok ? null : r.error)),
        ] as never,
      )
      .options(PREPARED);
    for (const { snapshot_id } of rows) await this.tryFinish(trx, snapshot_id);
  }

  /** Fails devices that never got a job (submit refused), so the run still ends. */
  async failDevices(snapshotId: string, deviceIds: string[], reason: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('snapshot_devices')
        .where({ snapshot_id: snapshotId, status: 'pending' })
        .whereIn('device_id', deviceIds)
        .update({ status: 'failed', error_message: reason, updated_at: trx.fn.now() });
      await this.tryFinish(trx, snapshotId);
    });
  }

  /**
   * Closes a collecting run none of whose devices is pending: final status, counts and
   * completed_at are written to the snapshot row. A cheap index probe when devices are still
   * pending. Two last devices finishing at the same instant may each still see the other
   * pending; reads are live regardless, and the sweeper closes such a run moments later.
   */
  async tryFinish(q: Db | Knex.Transaction, snapshotId: string): Promise<boolean> {
    const pending = await q('snapshot_devices').where({ snapshot_id: snapshotId, status: 'pending' }).first(q.raw('1 AS one'));
    if (pending) return false;
    const { rowCount } = await q.raw(
      `UPDATE snapshots s SET status = ${FINAL_STATUS}, successful_devices = c.ok, failed_devices = c.failed,
         completed_at = COALESCE(c.last, now()), updated_at = now()
       FROM (SELECT count(*) FILTER (WHERE status = 'success')::int AS ok, count(*) FILTER (WHERE status = 'failed')::int AS failed,
               max(updated_at) AS last FROM snapshot_devices WHERE snapshot_id = ?) c
       WHERE s.id = ? AND s.status = 'collecting'
         AND NOT EXISTS (SELECT 1 FROM snapshot_devices p WHERE p.snapshot_id = s.id AND p.status = 'pending')`,
      [snapshotId, snapshotId],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Ends runs past their deadline (devices still pending fail with the reason) and closes runs
   * whose devices have all reported. Idempotent, so every controller may run it at once.
   */
  async sweep(graceSeconds: number): Promise<number> {
    const open: { id: string; expired: boolean }[] = (
      await this.db.raw(
        `SELECT id, deadline_at + make_interval(secs => ?) < now() AS expired FROM snapshots s
       WHERE status = 'collecting'
         AND (deadline_at + make_interval(secs => ?) < now()
              OR NOT EXISTS (SELECT 1 FROM snapshot_devices p WHERE p.snapshot_id = s.id AND p.status = 'pending'))`,
        [graceSeconds, graceSeconds],
      )
    ).rows;
    let ended = 0;
    for (const { id, expired } of open) {
      await this.db.transaction(async (trx) => {
        if (expired) {
          // A device whose job is still open is left to the job's own deadline, which waits for
          // results a crashed controller held and then fails the job with the real reason; the
          // hard limit catches a job that never ends all the same.
          await trx('snapshot_devices as sd')
            .where({ 'sd.snapshot_id': id, 'sd.status': 'pending' })
            .where((w) =>
              w
                .whereRaw(`? > (SELECT deadline_at FROM snapshots WHERE id = ?) + make_interval(secs => ?)`, [
                  trx.fn.now(),
                  id,
                  OPEN_JOB_LIMIT_SECONDS,
                ])
                .orWhereNull('sd.job_id')
                .orWhereNotExists((q) => q.from('jobs as j').whereRaw('j.id = sd.job_id').whereIn('j.status', ['queued', 'dispatched', 'running'])),
            )
            .update({ status: 'failed', error_message: DEADLINE_REASON, updated_at: trx.fn.now() });
        }
        if (await this.tryFinish(trx, id)) ended += 1;
      });
    }
    return ended;
  }

  /** Per-device entries of the latest run: one per stored version, or the device's state. */
  backups(orgId: string, snapshotId: string) {
    return this.db('snapshot_devices as sd')
      .join('snapshots as s', 's.id', 'sd.snapshot_id')
      .leftJoin('config_versions as v', (j) =>
        j.on('v.snapshot_id', 'sd.snapshot_id').andOn('v.device_id', 'sd.device_id').andOn('v.job_id', 'sd.job_id'),
      )
      .where({ 's.org_id': orgId, 'sd.snapshot_id': snapshotId })
      .orderBy('sd.device_name')
      .orderBy('v.version')
      .select(
        'v.id as config_id',
        'sd.device_id',
        'sd.device_name',
        'v.version',
        'v.size_bytes',
        'v.line_count',
        this.db.raw('COALESCE(v.method, sd.methods[1]) AS backup_method'),
        'v.pulled_via',
        'v.config_hash',
        this.db.raw('COALESCE(v.status, sd.status) AS status'),
        this.db.raw('CASE WHEN v.id IS NULL THEN sd.error_message ELSE v.error_message END AS error_message'),
        'sd.attempts',
        this.db.raw('COALESCE(v.created_at, sd.updated_at) AS created_at'),
      );
  }
}
