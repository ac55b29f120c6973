import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { poolStatus, type AgentsService } from './service';
import type { DeviceGroupRow, HealthStore, SnapshotGroupRow, SnapshotRow } from './health-store';
import { FAILING_SHOWN } from './health-store';

type AgentView = Awaited<ReturnType<AgentsService['list']>>[number];

const DAY_MS = 24 * 3600_000;

const EMPTY_GROUP: Omit<DeviceGroupRow, 'site_id'> = { total: 0, reachable: 0, unreachable: 0, backed_up: 0, failing: [] };

/** Adds device groups up (the default pool gathers several). */
function sumGroups(groups: DeviceGroupRow[]): Omit<DeviceGroupRow, 'site_id'> {
  const out = { ...EMPTY_GROUP, failing: [] as DeviceGroupRow['failing'] };
  for (const g of groups) {
    out.total += g.total;
    out.reachable += g.reachable;
    out.unreachable += g.unreachable;
    out.backed_up += g.backed_up;
    out.failing.push(...g.failing);
  }
  out.failing.sort((a, b) => b.at.localeCompare(a.at) || a.name.localeCompare(b.name));
  out.failing = out.failing.slice(0, FAILING_SHOWN);
  return out;
}

/** The newest snapshot holding devices of any of the groups, with their outcomes in it summed. */
function lastSnapshot(snapshots: SnapshotRow[], counts: SnapshotGroupRow[], siteIds: (string | null)[]) {
  const wanted = new Set(siteIds);
  for (const snapshot of snapshots) {
    const mine = counts.filter((c) => c.snapshot_id === snapshot.id && wanted.has(c.site_id));
    if (mine.length === 0) continue;
    const sum = (key: 'succeeded' | 'failed' | 'pending') => mine.reduce((n, c) => n + c[key], 0);
    return {
      id: snapshot.id,
      name: snapshot.name,
      status: snapshot.status,
      created_at: snapshot.created_at,
      succeeded: sum('succeeded'),
      failed: sum('failed'),
      pending: sum('pending'),
    };
  }
  return null;
}

/**
 * The organization's health in one answer: every site and the default pool with agents, device
 * reachability, backup freshness, last snapshot outcome and failing devices (GET /api/sites/health).
 */
export class HealthService {
  constructor(
    private readonly store: HealthStore,
    private readonly agents: AgentsService,
  ) {}

  /** Snapshot outcomes per group: the newest snapshot first, the next ones only for groups it left out. */
  private async snapshotCounts(orgId: string, snapshots: SnapshotRow[], groups: (string | null)[]): Promise<SnapshotGroupRow[]> {
    const counts = await this.store.snapshotGroups(
      orgId,
      snapshots.slice(0, 1).map((s) => s.id),
    );
    const covered = new Set(counts.map((c) => c.site_id));
    if (groups.some((g) => !covered.has(g)) && snapshots.length > 1) {
      counts.push(
        ...(await this.store.snapshotGroups(
          orgId,
          snapshots.slice(1).map((s) => s.id),
        )),
      );
    }
    return counts;
  }

  async overview(orgId: string, now = new Date()) {
    const since = new Date(now.getTime() - DAY_MS);
    const [sites, agents, groups, snapshots] = await Promise.all([
      this.store.sites(orgId),
      this.agents.list(orgId),
      this.store.deviceGroups(orgId, since),
      this.store.latestSnapshots(orgId),
    ]);
    const counts = await this.snapshotCounts(
      orgId,
      snapshots,
      groups.map((g) => g.site_id),
    );
    const bySite = new Map<string | null, AgentView[]>();
    for (const agent of agents) bySite.set(agent.site_id, [...(bySite.get(agent.site_id) ?? []), agent]);
    const groupOf = new Map(groups.map((g) => [g.site_id, g]));
    // Devices of a site without agents go to the default pool, so its panel counts them too.
    const defaultMembers = [null, ...sites.filter((s) => !bySite.has(s.id)).map((s) => s.id)];
    const panel = (siteId: string | null, name: string, members: (string | null)[]) => {
      const list = bySite.get(siteId) ?? [];
      const devices = sumGroups(members.map((m) => groupOf.get(m)).filter((g): g is DeviceGroupRow => g !== undefined));
      return {
        site_id: siteId,
        name,
        pool: siteId !== null && list.length > 0 ? siteId : DEFAULT_POOL,
        status: poolStatus(list, devices.unreachable),
        agents: list,
        online_agents: list.filter((a) => a.status !== 'offline').length,
        devices: {
          total: devices.total,
          reachable: devices.reachable,
          unreachable: devices.unreachable,
          unknown: devices.total - devices.reachable - devices.unreachable,
          backed_up_24h: devices.backed_up,
        },
        failing_devices: devices.failing,
        last_snapshot: lastSnapshot(snapshots, counts, members),
      };
    };
    return {
      generated_at: now,
      pools: [panel(null, 'Default pool', defaultMembers), ...sites.map((s) => panel(s.id, s.name, [s.id]))],
    };
  }
}
