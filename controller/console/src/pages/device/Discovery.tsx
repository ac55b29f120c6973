import { Button, Group, Stack, Tabs, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { ErrorNote } from '../../components/Page';
import { RecordsTable } from '../../components/RecordsTable';

const KINDS = [
  { value: 'interfaces', label: 'Interfaces', path: '/api/devices/{id}/interfaces', key: 'interfaces' },
  { value: 'neighbors', label: 'Neighbors', path: '/api/devices/{id}/neighbors', key: 'neighbors' },
  { value: 'arp', label: 'ARP', path: '/api/devices/{id}/arp-table', key: 'arp_table' },
  { value: 'mac', label: 'MAC', path: '/api/devices/{id}/mac-table', key: 'mac_table' },
  { value: 'vlans', label: 'VLANs', path: '/api/devices/{id}/vlans', key: 'vlans' },
  { value: 'history', label: 'Poll history', path: '/api/devices/{id}/poll-history', key: 'polls' },
] as const;

type Kind = (typeof KINDS)[number];

function Records({ id, kind }: { id: string; kind: Kind }) {
  const records = useQuery({
    queryKey: ['discovery', id, kind.value],
    queryFn: () => unwrap(api.GET(kind.path, { params: { path: { id } } })),
  });
  if (records.error) return <ErrorNote error={records.error} />;
  const data = records.data as Record<string, unknown> | undefined;
  const rows = (data?.[kind.key] ?? Object.values(data ?? {}).find(Array.isArray) ?? []) as Record<string, unknown>[];
  return <RecordsTable records={rows} label={kind.label} empty={`No ${kind.label.toLowerCase()} recorded yet: use Poll now.`} />;
}

/** Discovery records of one device and a manual poll. */
export function Discovery({ id }: { id: string }) {
  const client = useQueryClient();
  const poll = useMutation({
    mutationFn: () => unwrap(api.POST('/api/devices/{id}/poll', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['discovery', id] }),
  });
  return (
    <Stack>
      <Group>
        <Button onClick={() => poll.mutate()} loading={poll.isPending}>
          Poll now
        </Button>
        {poll.data && (
          <Text size="sm" role="status">
            {poll.data.message}
          </Text>
        )}
      </Group>
      <ErrorNote error={poll.error} />
      <Tabs defaultValue="interfaces" keepMounted={false}>
        <Tabs.List>
          {KINDS.map((k) => (
            <Tabs.Tab key={k.value} value={k.value}>
              {k.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {KINDS.map((k) => (
          <Tabs.Panel key={k.value} value={k.value} pt="sm">
            <Records id={id} kind={k} />
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}
