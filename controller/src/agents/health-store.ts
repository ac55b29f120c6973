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
   * job since `since` (index probe on jobs (org_id, device_id, finished_at)); how many have a
   * successful backup since `since` (migration 180's partial index serves the probe); and the newest
   * failures. The per-device lookups run once, in the CTE.
   */
  async deviceGroups(orgId: string, since: Date): Promise<DeviceGroupRow[]> {
    // One index probe per device costs the plan past jit_above_cost, and compiling it took longer
    // (~200 ms) than running it: JIT stays off for this statement.
    return this.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL jit = off');
      const { rows } = await trx.raw(
        `WITH latest AS MATERIALIZED (
           SELECT d.id, d.name, d.site_id, j.status, j.error, j.kind, j.finished_at,
                  EXISTS (SELECT 1 FROM config_versions cv
                           WHERE cv.device_id = d.id AND cv.status = 'success' AND cv.created_at >= ?) AS backed_up
             FROM devices d
             LEFT JOIN LATERAL (
               SELECT status, error, kind, finished_at FROM jobs
                WHERE jobs.org_id = d.org_id AND jobs.device_id = d.id
                  AND jobs.status IN ('succeeded', 'failed') AND jobs.finished_at >= ?
                ORDER BY finished_at DESC LIMIT 1
             ) j ON true
            WHERE d.org_id = ?
         )
         SELECT site_id,
                count(*)::int AS total,
                count(*) FILTER (WHERE status = 'succeeded')::int AS reachable,
                count(*) FILTER (WHERE status = 'failed')::int AS unreachable,
                count(*) FILTER (WHERE backed_up)::int AS backed_up,
                COALESCE(to_json((array_agg(json_build_object('id', id, 'name', name, 'error', error, 'kind', kind,
                            'at', to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                          ORDER BY finished_at DESC, name) FILTER (WHERE status = 'failed'))[1:${FAILING_SHOWN}]), '[]'::json) AS failing
           FROM latest
          GROUP BY site_id`,
        [since, since, orgId],
      );
      return rows;
    });
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
