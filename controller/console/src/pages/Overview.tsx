import { Anchor, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, unwrap } from '../api/client';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { ago } from '../lib/format';
import { useLive } from '../live/use-live';
import { groupAgents, type AgentView } from './overview-model';

function AgentRows({ agents }: { agents: AgentView[] }) {
  if (agents.length === 0) return <Text size="sm" c="dimmed">No agents: create one on the Agents page.</Text>;
  return (
    <Table fz="sm" verticalSpacing={4} aria-label="Agents">
      <Table.Thead>
        <Table.Tr><Table.Th>Agent</Table.Th><Table.Th>Status</Table.Th><Table.Th>Heartbeat</Table.Th><Table.Th>Jobs</Table.Th></Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {agents.map((a) => (
          <Table.Tr key={a.id} data-agent={a.name}>
            <Table.Td>{a.name}<Text span size="xs" c="dimmed"> v{a.version || '?'}</Text></Table.Td>
            <Table.Td><StatusBadge status={a.status} /></Table.Td>
            <Table.Td>{ago(a.last_seen_at)}</Table.Td>
            <Table.Td>{a.active_jobs}/{a.max_jobs}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function SiteHealthLine({ siteId }: { siteId: string }) {
  const health = useQuery({
    queryKey: ['site-health', siteId],
    // Cancelled when the page is left: with many sites these would hold the browser's
    // connections and delay the next page's requests.
    queryFn: ({ signal }) => unwrap(api.GET('/api/sites/{id}/health', { params: { path: { id: siteId } }, signal })),
  });
  if (!health.data) return null;
  const d = health.data.devices;
  return (
    <Stack gap={2}>
      <Text size="sm">
        Reachable {d.reachable} · unreachable {d.unreachable} · no recent job {d.unknown}
      </Text>
      {health.data.unreachable_devices.slice(0, 3).map((u) => (
        <Text size="xs" c="red.8" key={u.id}>
          <Anchor component={Link} href={`/devices/${u.id}`} size="xs">{u.name}</Anchor>: {u.error ?? `${u.kind} failed`}
        </Text>
      ))}
    </Stack>
  );
}

function LastSnapshot() {
  const snapshots = useQuery({ queryKey: ['snapshots', 'latest'], queryFn: () => unwrap(api.GET('/api/devices/snapshots/', { params: { query: { limit: 1 } } })) });
  const last = (snapshots.data as { snapshots?: { name: string; status: string; successful_devices: number; failed_devices: number; total_devices: number }[] } | undefined)?.snapshots?.[0];
  if (!snapshots.data) return null;
  if (!last) return <Text size="sm">No snapshot yet: <Anchor component={Link} href="/snapshots">start one</Anchor> to back up every device.</Text>;
  return (
    <Group gap="xs">
      <Text size="sm">Last snapshot <Anchor component={Link} href="/snapshots">{last.name}</Anchor>:</Text>
      <StatusBadge status={last.status} />
      <Text size="sm">{last.successful_devices} of {last.total_devices} backed up, {last.failed_devices} failed</Text>
    </Group>
  );
}

/** Home: the agent health view, one panel per site plus the default pool, updated live. */
export default function Overview() {
  const client = useQueryClient();
  const sites = useQuery({ queryKey: ['sites'], queryFn: () => unwrap(api.GET('/api/sites')) });
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')), refetchInterval: 15_000 });
  useLive(['agent'], () => void client.invalidateQueries({ queryKey: ['agents'] }));
  useLive(['snapshot'], () => void client.invalidateQueries({ queryKey: ['snapshots'] }));

  const error = sites.error ?? agents.error;
  const panels = groupAgents(sites.data?.sites ?? [], agents.data?.agents ?? []);
  return (
    <Page title="Sites">
      <ErrorNote error={error} action="Check that the controller is running, then reload." />
      <LastSnapshot />
      {sites.data && panels.length === 0 && <Empty>No sites yet: add a site, then create an agent for it.</Empty>}
      <SimpleGrid cols={{ base: 1, md: 2, xl: 3 }}>
        {panels.map((panel) => (
          <Card withBorder key={panel.key} component="section" aria-label={panel.name} data-site={panel.name}>
            <Group justify="space-between" mb="xs">
              <Title order={2} size="h4">{panel.name}</Title>
              <StatusBadge status={panel.status} />
            </Group>
            <Text size="sm" mb="xs">
              {panel.deviceCount === null ? 'Devices without a site, or whose site has no agent' : `${panel.deviceCount} devices`}
            </Text>
            {panel.siteId && <SiteHealthLine siteId={panel.siteId} />}
            <AgentRows agents={panel.agents} />
          </Card>
        ))}
      </SimpleGrid>
    </Page>
  );
}
