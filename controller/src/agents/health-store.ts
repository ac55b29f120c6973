import type { Db } from '../db/knex';

/** How many failing devices each group names (the newest failures first). */
export const FAILING_SHOWN = 5;

/** How many of the newest snapshots are searched for each group's last one. */
const SNAPSHOTS_SEARCHED = 10;

/** Device figures of one group: the devices of one site, or (site_id null) the devices without a site. */
export interface DeviceGroupRow {
  site_id: string | null;
  total: number;
  reachable: number;
  unreachable: number;
  backed_up: number;
  failing: { id: string; name: string; error: string | null; kind: string; at: string }[];
}

export interface SnapshotRow {
  id: string;
  name: string;
  status: string;
  created_at: Date;
}

/** One group's devices in one snapshot, by outcome. */
export interface SnapshotGroupRow {
  snapshot_id: string;
  site_id: string | null;
  succeeded: number;
  failed: number;
  pending: number;
}

/**
 * SQL of the organization-wide health aggregate (GET /api/sites/health): grouped statements over
 * all devices at once, never one per site.
 */
export class HealthStore {
  constructor(private readonly db: Db) {}

  async sites(orgId: string): Promise<{ id: string; name: string }[]> {
    return this.db('sites').where({ org_id: orgId }).select('id', 'name').orderBy('name');
  }

  /**
   * Per site (and site_id null): device count; reachability from each device's latest finished
   * job, when it finished since `since`; how many have a successful backup since `since`; and the
   * newest failures. Each device's latest job and backup are kept in device_health by triggers
   * (migration 184): one row per device joined, whatever the history of jobs and versions.
   */
  async deviceGroups(orgId: string, since: Date): Promise<DeviceGroupRow[]> {
    const failed = "h.job_status = 'failed' AND h.job_finished_at >= :since";
    const { rows } = await this.db.raw(
      `SELECT d.site_id,
              count(*)::int AS total,
              count(*) FILTER (WHERE h.job_status = 'succeeded' AND h.job_finished_at >= :since)::int AS reachable,
              count(*) FILTER (WHERE ${failed})::int AS unreachable,
              count(*) FILTER (WHERE h.backup_at >= :since)::int AS backed_up,
              COALESCE(to_json((array_agg(json_build_object('id', d.id, 'name', d.name, 'error', h.job_error, 'kind', h.job_kind,
                          'at', to_char(h.job_finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                        ORDER BY h.job_finished_at DESC, d.name) FILTER (WHERE ${failed}))[1:${FAILING_SHOWN}]), '[]'::json) AS failing
         FROM devices d
         LEFT JOIN device_health h ON h.org_id = d.org_id AND h.device_id = d.id
        WHERE d.org_id = :orgId
        GROUP BY d.site_id`,
      { since, orgId },
    );
    return rows;
  }

  async latestSnapshots(orgId: string): Promise<SnapshotRow[]> {
    return this.db('snapshots')
      .where({ org_id: orgId })
      .orderBy('created_at', 'desc')
      .limit(SNAPSHOTS_SEARCHED)
      .select('id', 'name', 'status', 'created_at');
  }

  /** Per snapshot and device group: the outcomes of the group's (still existing) devices in it. */
  async snapshotGroups(orgId: string, snapshotIds: string[]): Promise<SnapshotGroupRow[]> {
    if (snapshotIds.length === 0) return [];
    const { rows } = await this.db.raw(
      `SELECT sd.snapshot_id, d.site_id,
              count(*) FILTER (WHERE sd.status = 'success')::int AS succeeded,
              count(*) FILTER (WHERE sd.status = 'failed')::int AS failed,
              count(*) FILTER (WHERE sd.status = 'pending')::int AS pending
         FROM snapshot_devices sd
         JOIN devices d ON d.id = sd.device_id AND d.org_id = ?
        WHERE sd.snapshot_id = ANY(?::uuid[])
        GROUP BY sd.snapshot_id, d.site_id`,
      [orgId, snapshotIds],
    );
    return rows;
  }
}
