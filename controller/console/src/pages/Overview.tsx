import { Anchor, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { ago } from '../lib/format';
import { healthQuery } from '../lib/queries';
import { useLive } from '../live/use-live';
import { freshness, poolStatus, withAgentEvent, type AgentEvent, type AgentView, type PoolHealth, type SitesHealth } from './overview-model';

const HEALTH = healthQuery.queryKey;

function AgentRows({ agents }: { agents: AgentView[] }) {
  if (agents.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No agents: create one on the Agents page.
      </Text>
    );
  return (
    <Table fz="sm" verticalSpacing={4} aria-label="Agents">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Agent</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Heartbeat</Table.Th>
          <Table.Th>Jobs</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {agents.map((a) => (
          <Table.Tr key={a.id} data-agent={a.name}>
            <Table.Td>
              {a.name}
              <Text span size="xs" c="dimmed">
                {' '}
                v{a.version || '?'}
              </Text>
            </Table.Td>
            <Table.Td>
              <StatusBadge status={a.status} />
            </Table.Td>
            <Table.Td>{ago(a.last_seen_at)}</Table.Td>
            <Table.Td>
              {a.active_jobs}/{a.max_jobs}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function DeviceLines({ pool }: { pool: PoolHealth }) {
  const d = pool.devices;
  const snapshot = pool.last_snapshot;
  return (
    <Stack gap={2} mb="xs">
      <Text size="sm">{pool.site_id === null ? `${d.total} devices without a site, or whose site has no agent` : `${d.total} devices`}</Text>
      <Text size="sm" data-freshness>
        Backed up in the last 24 h: {freshness(d)}
      </Text>
      <Text size="sm">
        Reachable {d.reachable} · unreachable {d.unreachable} · no recent job {d.unknown}
      </Text>
      {snapshot ? (
        <Group gap={6}>
          <Text size="sm">
            Last snapshot{' '}
            <Anchor component={Link} href="/snapshots" size="sm">
              {snapshot.name}
            </Anchor>
            :
          </Text>
          <StatusBadge status={snapshot.status} />
          <Text size="sm">
            {snapshot.succeeded} backed up, {snapshot.failed} failed{snapshot.pending > 0 ? `, ${snapshot.pending} pending` : ''}
          </Text>
        </Group>
      ) : (
        d.total > 0 && (
          <Text size="sm">
            No recent snapshot:{' '}
            <Anchor component={Link} href="/snapshots" size="sm">
              start one
            </Anchor>{' '}
            to back up every device.
          </Text>
        )
      )}
      {pool.failing_devices.slice(0, 3).map((u) => (
        <Text size="xs" c="red.8" key={u.id}>
          <Anchor component={Link} href={`/devices/${u.id}`} size="xs">
            {u.name}
          </Anchor>
          : {u.error ?? `${u.kind} failed`}
        </Text>
      ))}
    </Stack>
  );
}

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
        {!nothing &&
          pools.map((pool) => (
            <Card withBorder key={pool.site_id ?? 'default'} component="section" aria-label={pool.name} data-site={pool.name}>
              <Group justify="space-between" mb="xs">
                <Title order={2} size="h4">
                  {pool.name}
                </Title>
                <StatusBadge status={poolStatus(pool.agents, pool.devices.unreachable)} />
              </Group>
              <DeviceLines pool={pool} />
              <AgentRows agents={pool.agents} />
            </Card>
          ))}
      </SimpleGrid>
    </Page>
  );
}
