import type { FastifyBaseLogger } from 'fastify';
import { statusOf, type Liveness } from '../agents/service';
import type { AgentLiveRow, AgentLiveStore } from './agent-store';
import type { LiveEvent } from './hub';

export type AgentLiveStatus = 'online' | 'offline' | 'degraded' | 'revoked';

/** How often the watch looks; an agent shows offline at most this long after offline_after_seconds. */
export const AGENT_WATCH_MS = 2_000;

export interface AgentWatchDeps {
  store: AgentLiveStore;
  liveness: () => Promise<Liveness>;
  /** Organizations somebody on this replica is watching. */
  watchedOrgs: () => string[];
  publish: (event: LiveEvent) => void;
  log: FastifyBaseLogger;
}

function liveStatus(row: AgentLiveRow, live: Liveness, now: number): AgentLiveStatus {
  return row.revoked_at ? 'revoked' : statusOf(row, live, now);
}

/**
 * Agent status events for /api/live. An agent's status is derived from its last heartbeat, so
 * no row changes when it goes quiet: the watch re-reads the watched organizations' agents every
 * few seconds and announces each change (and each new agent) as {type: "agent", ...}. Every
 * replica watches for its own clients, from the shared database.
 */
export class AgentWatch {
  private readonly known = new Map<string, AgentLiveStatus>();
  private readonly seenOrgs = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(private readonly deps: AgentWatchDeps) {}

  start(intervalMs = AGENT_WATCH_MS): void {
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look; public for tests. A look still running is not doubled. */
  async tick(now = Date.now()): Promise<void> {
    const orgs = this.deps.watchedOrgs();
    this.forgetUnwatched(orgs);
    if (orgs.length === 0 || this.running) return;
    this.running = true;
    try {
      for (const [row, status] of await this.statuses(orgs, now)) this.compare(row, status);
      for (const org of orgs) this.seenOrgs.add(org);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'agent watch failed');
    } finally {
      this.running = false;
    }
  }

  /**
   * Learns an organization's agents as they are now, before its first watcher is told it is ready,
   * so that a change right after (an agent coming online within the first look's interval) is
   * announced rather than taken for the present.
   */
  async learn(orgId: string): Promise<void> {
    if (this.seenOrgs.has(orgId)) return;
    try {
      for (const [row, status] of await this.statuses([orgId], Date.now())) if (!this.known.has(row.id)) this.known.set(row.id, status);
      this.seenOrgs.add(orgId);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'agent watch failed');
    }
  }

  /** The organizations' agents with their status at `now`. */
  private async statuses(orgs: string[], now: number): Promise<[AgentLiveRow, AgentLiveStatus][]> {
    const [rows, live] = await Promise.all([this.deps.store.agents(orgs), this.deps.liveness()]);
    return rows.map((row) => [row, liveStatus(row, live, now)]);
  }

  private compare(row: AgentLiveRow, status: AgentLiveStatus): void {
    const previous = this.known.get(row.id);
    this.known.set(row.id, status);
    // The first look at an organization only learns the present; changes come after.
    if (previous === status || (previous === undefined && !this.seenOrgs.has(row.org_id))) return;
    this.deps.publish({
      type: 'agent',
      org_id: row.org_id,
      id: row.id,
      name: row.name,
      site_id: row.site_id,
      status,
      previous: previous ?? null,
      last_seen_at: row.last_seen_at ? row.last_seen_at.toISOString() : null,
    });
  }

  private forgetUnwatched(orgs: string[]): void {
    const watched = new Set(orgs);
    for (const org of [...this.seenOrgs]) if (!watched.has(org)) this.seenOrgs.delete(org);
    if (this.seenOrgs.size === 0 && orgs.length === 0) this.known.clear();
  }
}
