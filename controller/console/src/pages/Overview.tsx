import { SimpleGrid } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { memo } from 'react';
import { Link } from 'wouter';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { ago } from '../lib/format';
import { healthQuery } from '../lib/queries';
import { useLive } from '../live/use-live';
import './overview.css';
import { freshness, poolStatus, withAgentEvent, type AgentEvent, type AgentView, type PoolHealth, type SitesHealth } from './overview-model';

const HEALTH = healthQuery.queryKey;

function AgentRows({ agents }: { agents: AgentView[] }) {
  if (agents.length === 0) return <p className="sb-dimmed">No agents: create one on the Agents page.</p>;
  return (
    <table aria-label="Agents">
      <thead>
        <tr>
          <th>Agent</th>
          <th>Status</th>
          <th>Heartbeat</th>
          <th>Jobs</th>
        </tr>
      </thead>
      <tbody>
        {agents.map((a) => (
          <tr key={a.id} data-agent={a.name}>
            <td>
              {a.name}
              <span className="sb-version"> v{a.version || '?'}</span>
            </td>
            <td>
              <StatusBadge status={a.status} />
            </td>
            <td>{ago(a.last_seen_at)}</td>
            <td>
              {a.active_jobs}/{a.max_jobs}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DeviceLines({ pool }: { pool: PoolHealth }) {
  const d = pool.devices;
  const snapshot = pool.last_snapshot;
  return (
    <div className="sb-pool-lines">
      <p>{pool.site_id === null ? `${d.total} devices without a site, or whose site has no agent` : `${d.total} devices`}</p>
      <p data-freshness>Backed up in the last 24 h: {freshness(d)}</p>
      <p>
        Reachable {d.reachable} · unreachable {d.unreachable} · no recent job {d.unknown}
      </p>
      {snapshot ? (
        <div className="sb-snapshot">
          <p>
            Last snapshot <Link href="/snapshots">{snapshot.name}</Link>:
          </p>
          <StatusBadge status={snapshot.status} />
          <p>
            {snapshot.succeeded} backed up, {snapshot.failed} failed{snapshot.pending > 0 ? `, ${snapshot.pending} pending` : ''}
          </p>
        </div>
      ) : (
        d.total > 0 && (
          <p>
            No recent snapshot: <Link href="/snapshots">start one</Link> to back up every device.
          </p>
        )
      )}
      {pool.failing_devices.slice(0, 3).map((u) => (
        <p className="sb-failing" key={u.id}>
          <Link href={`/devices/${u.id}`}>{u.name}</Link>: {u.error ?? `${u.kind} failed`}
        </p>
      ))}
    </div>
  );
}

/** One site's (or the default pool's) panel, drawn again only when its part of the answer changes. */
const PoolPanel = memo(function PoolPanel({ pool }: { pool: PoolHealth }) {
  return (
    <section className="sb-pool" aria-label={pool.name} data-site={pool.name}>
      <div className="sb-pool-head">
        <h2>{pool.name}</h2>
        <StatusBadge status={poolStatus(pool.agents, pool.devices.unreachable)} />
      </div>
      <DeviceLines pool={pool} />
      <AgentRows agents={pool.agents} />
    </section>
  );
});

/** Home: the agent health view, one panel per site plus the default pool, from one request and updated live. */
export default function Overview() {
  const client = useQueryClient();
  const health = useQuery({ ...healthQuery, refetchInterval: 15_000 });
  // An agent's new status goes straight into the page; an agent the page does not show yet makes it ask again.
  useLive(['agent'], (message) => {
    const current = client.getQueryData<SitesHealth>(HEALTH);
    const next = current && withAgentEvent(current, message as unknown as AgentEvent);
    if (next) client.setQueryData(HEALTH, next);
    else void client.invalidateQueries({ queryKey: HEALTH });
  });
  useLive(['snapshot'], () => void client.invalidateQueries({ queryKey: HEALTH }));

  const pools = health.data?.pools ?? [];
  const nothing = pools.length === 1 && pools[0].agents.length === 0 && pools[0].devices.total === 0;
  return (
    <Page title="Sites">
      <ErrorNote error={health.error} action="Check that the controller is running, then reload." />
      {nothing && <Empty>No sites yet: add a site, then create an agent for it.</Empty>}
      <SimpleGrid cols={{ base: 1, md: 2, xl: 3 }}>
        {!nothing && pools.map((pool) => <PoolPanel key={pool.site_id ?? 'default'} pool={pool} />)}
      </SimpleGrid>
    </Page>
  );
}
