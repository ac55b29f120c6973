/** The Sites overview's grouping, kept free of React so Vitest can check it. */
export interface AgentView {
  id: string;
  name: string;
  site_id: string | null;
  status: string;
  last_seen_at: string | null;
  version: string;
  active_jobs: number;
  max_jobs: number;
}

export interface SiteView {
  id: string;
  name: string;
  device_count: number;
}

export interface Panel {
  key: string;
  siteId: string | null;
  name: string;
  deviceCount: number | null;
  status: 'ok' | 'degraded' | 'down' | 'no_agents';
  agents: AgentView[];
}

export function poolStatus(agents: AgentView[]): Panel['status'] {
  if (agents.length === 0) return 'no_agents';
  const online = agents.filter((a) => a.status === 'online').length;
  const offline = agents.filter((a) => a.status === 'offline').length;
  if (offline === agents.length) return 'down';
  return online === agents.length ? 'ok' : 'degraded';
}

/** The default pool first, then each site by name, each with its agents. */
export function groupAgents(sites: SiteView[], agents: AgentView[]): Panel[] {
  const bySite = new Map<string | null, AgentView[]>();
  for (const agent of agents) {
    const list = bySite.get(agent.site_id) ?? [];
    list.push(agent);
    bySite.set(agent.site_id, list);
  }
  const pool = bySite.get(null) ?? [];
  const panels: Panel[] = [];
  if (sites.length > 0 || pool.length > 0) {
    panels.push({ key: 'default', siteId: null, name: 'Default pool', deviceCount: null, status: poolStatus(pool), agents: pool });
  }
  for (const site of [...sites].sort((a, b) => a.name.localeCompare(b.name))) {
    const list = bySite.get(site.id) ?? [];
    panels.push({ key: site.id, siteId: site.id, name: site.name, deviceCount: site.device_count, status: poolStatus(list), agents: list });
  }
  return panels;
}
