/** The Sites overview's model (GET /api/sites/health and live agent events), kept free of React so Vitest can check it. */
import type { paths } from '../api/schema';

export type SitesHealth = paths['/api/sites/health']['get']['responses'][200]['content']['application/json'];
export type PoolHealth = SitesHealth['pools'][number];
export type AgentView = PoolHealth['agents'][number];
export type PanelStatus = 'ok' | 'degraded' | 'down' | 'no_agents';

/** Down only when every agent is offline; degraded while any agent is not online or any device fails. */
export function poolStatus(agents: Pick<AgentView, 'status'>[], failingDevices = 0): PanelStatus {
  if (agents.length === 0) return 'no_agents';
  const online = agents.filter((a) => a.status === 'online').length;
  const offline = agents.filter((a) => a.status === 'offline').length;
  if (offline === agents.length) return 'down';
  return online === agents.length && failingDevices === 0 ? 'ok' : 'degraded';
}

/** An agent status event of /api/live. */
export interface AgentEvent {
  id: string;
  site_id: string | null;
  status: string;
  last_seen_at: string | null;
}

/**
 * The aggregate with one agent's new status applied, so the page changes at once without asking
 * the server again; undefined when the event does not fit what is shown (a new, moved or revoked
 * agent), and the aggregate must be fetched again.
 */
export function withAgentEvent(data: SitesHealth, event: AgentEvent): SitesHealth | undefined {
  if (event.status === 'revoked') return undefined;
  const pool = data.pools.find((p) => p.agents.some((a) => a.id === event.id));
  if (!pool || pool.site_id !== event.site_id) return undefined;
  const status = event.status as AgentView['status'];
  const agents = pool.agents.map((a) => (a.id === event.id ? { ...a, status, last_seen_at: event.last_seen_at } : a));
  const online_agents = agents.filter((a) => a.status !== 'offline').length;
  return { ...data, pools: data.pools.map((p) => (p === pool ? { ...p, agents, online_agents } : p)) };
}

/** "12 of 40 (30 %)": devices with a successful backup in the last 24 hours, of all. */
export function freshness(devices: PoolHealth['devices']): string {
  if (devices.total === 0) return 'no devices';
  return `${devices.backed_up_24h} of ${devices.total} (${Math.floor((devices.backed_up_24h / devices.total) * 100)} %)`;
}
