import { Anchor, Box, Button, Card, Group, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useParams } from 'wouter';
import { api, unwrap } from '../api/client';
import { confirmAction } from '../components/confirm';
import { ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { dateTime, deviceTally } from '../lib/format';
import { useLive } from '../live/use-live';

interface LogLine {
  id: number;
  level: string;
  message: string;
  device_id: string | null;
  created_at: string;
}

/** One deployment: each device's state and the log, both live; rollback once it has finished. */
export default function Deployment() {
  const { id } = useParams<{ id: string }>();
  const client = useQueryClient();
  const deployment = useQuery({
    queryKey: ['deployment', id],
    queryFn: () => unwrap(api.GET('/api/config/deployments/{id}', { params: { path: { id } } })),
  });
  const [lines, setLines] = useState<LogLine[]>([]);

  useEffect(() => {
    void unwrap(api.GET('/api/config/deployments/{id}/logs', { params: { path: { id }, query: { limit: 1000 } } }))
      .then((page) => setLines((live) => merge(page.logs, live)))
      .catch(() => undefined);
  }, [id]);
  useLive(['deployment', 'deployment_device', 'deployment_log'], (m) => {
    const own = m.type === 'deployment' ? m.id === id : m.deployment_id === id;
    if (!own) return;
    if (m.type === 'deployment_log') setLines((l) => merge(l, [m as unknown as LogLine]));
    else void client.invalidateQueries({ queryKey: ['deployment', id] });
  });

  const d = deployment.data;
  if (deployment.error)
    return (
      <Page title="Deployment">
        <ErrorNote error={deployment.error} />
      </Page>
    );
  if (!d) return null;
  const names = new Map(d.devices.map((x) => [x.device_id, x.device_name]));
  const canRollBack = d.status === 'completed' || d.status === 'failed';
  // Devices changed since the deployment are left alone unless the operator forces the rollback.
  const refused = d.status === 'failed' && d.devices.some((x) => x.status === 'rollback_failed' && x.error_message?.startsWith('Rollback refused'));
  const rollback = async (force: boolean) => {
    const confirmed = force
      ? await confirmAction(
          'Roll back anyway',
          `Push the pre-deployment backups of ${d.name} back even onto devices changed since (by hand or by a later deployment)? ` +
            'That undoes those changes too.',
          'Roll back anyway',
        )
      : await confirmAction(
          'Roll back deployment',
          `Push each device's pre-deployment backup back (replace) for ${d.name}? Devices changed since the deployment are left alone.`,
          'Roll back',
        );
    if (!confirmed) return;
    const { error } = await api.POST('/api/config/deployments/{id}/rollback', {
      params: { path: { id } },
      body: { force },
    });
    if (error) notifications.show({ color: 'red', title: 'Rollback refused', message: (error as { error: string }).error });
    void client.invalidateQueries({ queryKey: ['deployment', id] });
  };

  return (
    <Page
      title={d.name}
      actions={
        canRollBack && (
          <Group>
            <Button color="orange" onClick={() => void rollback(false)}>
              Roll back
            </Button>
            {refused && (
              <Button color="red" variant="outline" onClick={() => void rollback(true)}>
                Roll back anyway
              </Button>
            )}
          </Group>
        )
      }
    >
      <Anchor component={Link} href="/deployments" size="sm">
        ← Deployments
      </Anchor>
      <Group>
        <StatusBadge status={d.status} />
        <Text size="sm" data-testid="deployment-status">
          {d.status}
        </Text>
        <Text size="sm" data-testid="deployment-tally">
          {deviceTally(d.devices, d.total_devices)}
        </Text>
        <Text size="sm" c="dimmed">
          started {dateTime(d.started_at)}
          {d.completed_at ? `, finished ${dateTime(d.completed_at)}` : ''}
        </Text>
      </Group>
      <Table aria-label="Devices of the deployment" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Device</Table.Th>
            <Table.Th>Service</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Error</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {d.devices.map((x) => (
            <Table.Tr key={`${x.device_id}-${x.service_name}`}>
              <Table.Td>
                <Anchor component={Link} href={`/devices/${x.device_id}`}>
                  {x.device_name}
                </Anchor>
              </Table.Td>
              <Table.Td>{x.service_name}</Table.Td>
              <Table.Td>
                <StatusBadge status={x.status} />
              </Table.Td>
              <Table.Td>
                <Text size="xs" c="red">
                  {x.error_message}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Card withBorder>
        <Text fw={600} mb="xs">
          Log
        </Text>
        <Box component="pre" fz="xs" style={{ maxHeight: 360, overflow: 'auto', margin: 0 }} aria-live="polite" data-testid="deployment-log">
          {lines
            .map(
              (l) =>
                `${new Date(l.created_at).toLocaleTimeString()} ${l.level.padEnd(5)} ` +
                `${l.device_id ? `[${names.get(l.device_id) ?? l.device_id}] ` : ''}${l.message}`,
            )
            .join('\n')}
        </Box>
      </Card>
    </Page>
  );
}

/** Log lines by id, in id order: the page load and the live stream may overlap. */
function merge(a: LogLine[], b: LogLine[]): LogLine[] {
  const byId = new Map<number, LogLine>();
  for (const line of [...a, ...b]) byId.set(line.id, line);
  return [...byId.values()].sort((x, y) => x.id - y.id);
}
