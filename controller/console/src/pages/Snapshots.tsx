import { Anchor, Button, Card, Group, Modal, Progress, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, unwrap } from '../api/client';
import { useActionError } from '../components/ActionError';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { DEVICE_TYPES } from '../lib/device-types';
import { dateTime } from '../lib/format';
import { siteOptions, useSites } from '../lib/sites';
import { useLive } from '../live/use-live';

interface Snapshot {
  id: string;
  name: string;
  status: string;
  total_devices: number;
  successful_devices: number;
  failed_devices: number;
  created_at?: string;
}

function Outcomes({ id }: { id: string }) {
  const backups = useQuery({
    queryKey: ['snapshot-backups', id],
    queryFn: () => unwrap(api.GET('/api/devices/snapshots/{id}/backups', { params: { path: { id } } })),
  });
  const [log, setLog] = useState<{ id: string; text: string } | null>(null);
  const rows = ((backups.data as { backups?: unknown[] } | undefined)?.backups ?? (Array.isArray(backups.data) ? backups.data : [])) as {
    id?: string;
    config_id?: string;
    device_id?: string;
    device_name: string;
    status: string;
    error_message: string | null;
    version: number | null;
  }[];
  const openLog = async (configId: string) => {
    const { data, error } = await api.GET('/api/devices/snapshots/backups/{config_id}/log', { params: { path: { config_id: configId } } });
    setLog({ id: configId, text: error ? String(error) : (data as { log: string }).log });
  };
  if (backups.error) return <ErrorNote error={backups.error} />;
  if (rows.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No device outcomes yet.
      </Text>
    );
  return (
    <>
      <Table fz="sm" aria-label="Device outcomes">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Device</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Version</Table.Th>
            <Table.Th>Reason</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r, i) => (
            <Table.Tr key={r.config_id ?? r.id ?? i}>
              <Table.Td>
                {r.device_id ? (
                  <Anchor component={Link} href={`/devices/${r.device_id}`}>
                    {r.device_name}
                  </Anchor>
                ) : (
                  r.device_name
                )}
              </Table.Td>
              <Table.Td>
                <StatusBadge status={r.status} />
              </Table.Td>
              <Table.Td>{r.version ?? '—'}</Table.Td>
              <Table.Td>
                {r.error_message}
                {(r.config_id ?? r.id) && r.status === 'failed' && (
                  <Button size="xs" variant="subtle" onClick={() => void openLog((r.config_id ?? r.id)!)}>
                    Session log
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Modal opened={log !== null} onClose={() => setLog(null)} title="Session log" size="xl">
        <Text component="pre" fz="xs" style={{ whiteSpace: 'pre-wrap' }}>
          {log?.text}
        </Text>
      </Modal>
    </>
  );
}

function SnapshotCard({ s }: { s: Snapshot }) {
  const [open, setOpen] = useState(false);
  const done = s.successful_devices + s.failed_devices;
  const pct = s.total_devices ? (done / s.total_devices) * 100 : 0;
  return (
    <Card withBorder data-snapshot={s.name}>
      <Group justify="space-between">
        <Text fw={600}>{s.name}</Text>
        <StatusBadge status={s.status} />
      </Group>
      <Progress.Root mt="xs" size="lg" aria-label={`${s.name} progress`}>
        <Progress.Section value={s.total_devices ? (s.successful_devices / s.total_devices) * 100 : 0} color="green" />
        <Progress.Section value={s.total_devices ? (s.failed_devices / s.total_devices) * 100 : 0} color="red" />
      </Progress.Root>
      <Group justify="space-between" mt={4}>
        <Text size="xs">
          {done} of {s.total_devices} devices · {s.successful_devices} succeeded · {s.failed_devices} failed ({Math.round(pct)}%)
        </Text>
        <Text size="xs" c="dimmed">
          {dateTime(s.created_at)}
        </Text>
      </Group>
      <Button size="xs" variant="subtle" mt={4} onClick={() => setOpen((o) => !o)} aria-expanded={open}>
        {open ? 'Hide devices' : 'Show devices'}
      </Button>
      {open && <Outcomes id={s.id} />}
    </Card>
  );
}

/** Snapshots: start one (every device, or a site), watch it live, inspect per-device outcomes. */
export default function Snapshots() {
  const client = useQueryClient();
  const snapshots = useQuery({ queryKey: ['snapshots'], queryFn: () => unwrap(api.GET('/api/devices/snapshots/')) });
  const [name, setName] = useState(`Snapshot ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`);
  const [siteId, setSiteId] = useState<string | null>(null);
  const [deviceType, setDeviceType] = useState<string | null>(null);
  const sites = useSites();
  const { error, run } = useActionError();
  useLive(['snapshot'], () => {
    void client.invalidateQueries({ queryKey: ['snapshots'] });
    void client.invalidateQueries({ queryKey: ['snapshot-backups'] });
  });
  const start = async () => {
    await run(async () => {
      // Omitted filter fields mean every device of the organization.
      const deviceFilter = { ...(siteId ? { site_id: siteId } : {}), ...(deviceType ? { device_type: deviceType } : {}) };
      const created = await unwrap(
        api.POST('/api/devices/snapshots/', { body: { name, ...(siteId || deviceType ? { device_filter: deviceFilter } : {}) } }),
      );
      const id = (created as { snapshot: { id: string } }).snapshot.id;
      const { error: failed } = await api.POST('/api/devices/snapshots/{id}/collect', { params: { path: { id } }, body: {} });
      if (failed) {
        // Nothing half-done: a snapshot that cannot collect is removed again.
        await api.DELETE('/api/devices/snapshots/{id}', { params: { path: { id } } });
        throw new Error(String(failed));
      }
    });
    void client.invalidateQueries({ queryKey: ['snapshots'] });
  };
  const list = (snapshots.data as { snapshots?: Snapshot[] } | undefined)?.snapshots ?? [];
  return (
    <Page title="Snapshots">
      <Group align="end">
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} w={300} />
        <Select
          label="Site"
          placeholder="All sites"
          data={siteOptions(sites.data as { sites: { id: string; name: string }[] } | undefined)}
          value={siteId}
          onChange={setSiteId}
          clearable
          searchable
          w={220}
        />
        <Select label="Device type" placeholder="All types" data={DEVICE_TYPES} value={deviceType} onChange={setDeviceType} clearable w={180} />
        <Button onClick={() => void start()} disabled={!name.trim()}>
          {siteId || deviceType ? 'Start snapshot of matching devices' : 'Start snapshot of all devices'}
        </Button>
      </Group>
      {error && <ErrorNote error={new Error(error)} />}
      <ErrorNote error={sites.error} />
      <ErrorNote error={snapshots.error} />
      {snapshots.data && list.length === 0 && <Empty>No snapshots yet: start one to back up every device at once.</Empty>}
      <Stack>
        {list.map((s) => (
          <SnapshotCard key={s.id} s={s} />
        ))}
      </Stack>
    </Page>
  );
}
