import { Alert, Button, Group, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { confirmAction } from '../components/confirm';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { dateTime } from '../lib/format';

type TaskType = 'backup' | 'snapshot' | 'deployment';

/** The choices of a task's target select: the saved instances, or the snapshots. */
const targetOptions = (list: { id: string; name: string }[] | undefined) => (list ?? []).map((t) => ({ value: t.id, label: t.name }));

/** A backup task of every device, a collection of a snapshot, or a deployment of a saved instance, on a cron schedule. */
function NewTask({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<TaskType>('backup');
  const [cron, setCron] = useState('0 2 * * *');
  const [instanceId, setInstanceId] = useState<string | null>(null);
  const [snapshotId, setSnapshotId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const instances = useQuery({
    queryKey: ['instances'],
    queryFn: () => unwrap(api.GET('/api/config/instances')),
    enabled: type === 'deployment',
  });
  const snapshots = useQuery({ queryKey: ['snapshots'], queryFn: () => unwrap(api.GET('/api/devices/snapshots/')), enabled: type === 'snapshot' });
  const instanceList = ((Array.isArray(instances.data) ? instances.data : (instances.data as { instances?: unknown[] } | undefined)?.instances) ??
    []) as { id: string; name: string }[];
  const snapshotList = (snapshots.data as { snapshots?: { id: string; name: string }[] } | undefined)?.snapshots;
  const create = async () => {
    setError(null);
    try {
      await unwrap(
        api.POST('/api/tasks/', {
          body: {
            name: name.trim(),
            type,
            cron: cron.trim(),
            ...(type === 'deployment' && instanceId ? { instance_id: instanceId } : {}),
            ...(type === 'snapshot' && snapshotId ? { snapshot_id: snapshotId } : {}),
          },
        }),
      );
      setName('');
      onCreated();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <Stack gap="xs">
      {error && (
        <Alert color="red" role="alert" title="Not scheduled">
          {error}
        </Alert>
      )}
      <Group align="end" wrap="wrap">
        <TextInput label="Task name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Select
          label="Type"
          allowDeselect={false}
          value={type}
          onChange={(v) => setType((v ?? 'backup') as TaskType)}
          data={[
            { value: 'backup', label: 'Backup of every device' },
            { value: 'snapshot', label: 'Collect a snapshot' },
            { value: 'deployment', label: 'Deploy an instance' },
          ]}
          w={220}
        />
        {type === 'deployment' && <Select label="Instance" data={targetOptions(instanceList)} value={instanceId} onChange={setInstanceId} w={200} />}
        {type === 'snapshot' && <Select label="Snapshot" data={targetOptions(snapshotList)} value={snapshotId} onChange={setSnapshotId} w={200} />}
        <TextInput
          label="Cron"
          description="minute hour day month weekday, in UTC"
          value={cron}
          onChange={(e) => setCron(e.currentTarget.value)}
          w={200}
        />
        <Button onClick={() => void create()} disabled={!name.trim()}>
          Schedule
        </Button>
      </Group>
    </Stack>
  );
}

/** Scheduled tasks: create, enable or pause, delete; last and next run. */
export default function Tasks() {
  const client = useQueryClient();
  const tasks = useQuery({ queryKey: ['tasks'], queryFn: () => unwrap(api.GET('/api/tasks/')) });
  const refresh = () => void client.invalidateQueries({ queryKey: ['tasks'] });
  const list = ((tasks.data as { tasks?: unknown[] } | undefined)?.tasks ?? (Array.isArray(tasks.data) ? tasks.data : [])) as {
    id: string;
    name: string;
    type: string;
    cron: string;
    timezone: string;
    enabled: boolean;
    last_run_at: string | null;
    next_run_at: string | null;
    last_status: string | null;
    last_error: string | null;
  }[];
  const toggle = async (id: string, enabled: boolean) => {
    await api.PUT('/api/tasks/{id}', { params: { path: { id } }, body: { enabled } });
    refresh();
  };
  const remove = async (id: string, name: string) => {
    if (!(await confirmAction('Delete task', `Delete the scheduled task ${name}?`, 'Delete'))) return;
    await api.DELETE('/api/tasks/{id}', { params: { path: { id } } });
    refresh();
  };
  return (
    <Page title="Scheduled tasks">
      <NewTask onCreated={refresh} />
      <ErrorNote error={tasks.error} />
      {tasks.data && list.length === 0 && <Empty>No scheduled tasks yet: schedule a nightly backup above.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Scheduled tasks">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Cron</Table.Th>
              <Table.Th>Next run</Table.Th>
              <Table.Th>Last run</Table.Th>
              <Table.Th>Enabled</Table.Th>
              <Table.Th>Delete</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.name}</Table.Td>
                <Table.Td>{t.type}</Table.Td>
                <Table.Td>
                  <Text ff="monospace" size="sm">
                    {t.cron}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {t.timezone}
                  </Text>
                </Table.Td>
                <Table.Td>{t.enabled ? dateTime(t.next_run_at) : 'paused'}</Table.Td>
                <Table.Td>
                  {dateTime(t.last_run_at)} {t.last_status && <StatusBadge status={t.last_status} />}
                  {t.last_error && (
                    <Text size="xs" c="red">
                      {t.last_error}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Switch aria-label={`Enable ${t.name}`} checked={t.enabled} onChange={(e) => void toggle(t.id, e.currentTarget.checked)} />
                </Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" color="red" c="red" onClick={() => void remove(t.id, t.name)} aria-label={`Delete ${t.name}`}>
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Page>
  );
}
