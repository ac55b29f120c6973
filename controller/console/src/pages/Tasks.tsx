import { Button, Group, Select, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ActionError, useActionError } from '../components/ActionError';
import { confirmAction } from '../components/confirm';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { DEVICE_TYPES } from '../lib/device-types';
import { dateTime } from '../lib/format';
import { nameOptions, siteOptions, useSites } from '../lib/sites';

type TaskType = 'backup' | 'snapshot' | 'deployment';

/** The new task form: its target is the instance, the snapshot, or the backup's site and device type (none: every device). */
interface TaskForm {
  name: string;
  type: TaskType;
  cron: string;
  timezone: string;
  instanceId: string | null;
  snapshotId: string | null;
  siteId: string | null;
  deviceType: string | null;
}

const EMPTY_FORM: TaskForm = {
  name: '',
  type: 'backup',
  cron: '0 2 * * *',
  timezone: 'UTC',
  instanceId: null,
  snapshotId: null,
  siteId: null,
  deviceType: null,
};

/** The POST /api/tasks body of the form: only the target fields of its type. */
function taskBody(f: TaskForm) {
  const filter = { ...(f.siteId && { site_id: f.siteId }), ...(f.deviceType && { device_type: f.deviceType }) };
  return {
    name: f.name.trim(),
    type: f.type,
    cron: f.cron.trim(),
    timezone: f.timezone.trim() || 'UTC',
    ...(f.type === 'deployment' && f.instanceId ? { instance_id: f.instanceId } : {}),
    ...(f.type === 'snapshot' && f.snapshotId ? { snapshot_id: f.snapshotId } : {}),
    ...(f.type === 'backup' && Object.keys(filter).length > 0 ? { device_filter: filter } : {}),
  };
}

/** Which devices a backup task backs up, in words ('' for every device). */
function filterText(filter: { site_id?: string; device_type?: string; device_ids?: string[] } | undefined, siteName: (id: string) => string): string {
  if (!filter) return '';
  const parts = [
    filter.site_id && siteName(filter.site_id),
    filter.device_type,
    filter.device_ids && `${filter.device_ids.length} device${filter.device_ids.length === 1 ? '' : 's'}`,
  ];
  return parts.filter(Boolean).join(', ');
}

/** The target fields of the form's type: an instance, a snapshot, or the backup's optional site and device type. */
function TaskTarget({ form, set }: { form: TaskForm; set: (changes: Partial<TaskForm>) => void }) {
  const instances = useQuery({
    queryKey: ['instances'],
    queryFn: () => unwrap(api.GET('/api/config/instances')),
    enabled: form.type === 'deployment',
  });
  const snapshots = useQuery({
    queryKey: ['snapshots'],
    queryFn: () => unwrap(api.GET('/api/devices/snapshots/')),
    enabled: form.type === 'snapshot',
  });
  const sites = useSites();
  const instanceList = ((Array.isArray(instances.data) ? instances.data : (instances.data as { instances?: unknown[] } | undefined)?.instances) ??
    []) as { id: string; name: string }[];
  const snapshotList = (snapshots.data as { snapshots?: { id: string; name: string }[] } | undefined)?.snapshots;
  if (form.type === 'deployment')
    return <Select label="Instance" data={nameOptions(instanceList)} value={form.instanceId} onChange={(v) => set({ instanceId: v })} w={200} />;
  if (form.type === 'snapshot')
    return <Select label="Snapshot" data={nameOptions(snapshotList)} value={form.snapshotId} onChange={(v) => set({ snapshotId: v })} w={200} />;
  return (
    <>
      <Select
        label="Site"
        placeholder="Every site"
        data={siteOptions(sites.data)}
        value={form.siteId}
        onChange={(v) => set({ siteId: v })}
        clearable
        w={180}
      />
      <Select
        label="Device type"
        placeholder="Every type"
        data={DEVICE_TYPES}
        value={form.deviceType}
        onChange={(v) => set({ deviceType: v })}
        clearable
        w={160}
      />
    </>
  );
}

/** A backup task (every device, or a site's or a device type's), a collection of a snapshot, or a deployment of a saved instance, on a cron schedule. */
function NewTask({ onCreated }: { onCreated: () => void }) {
  const [form, setForm] = useState<TaskForm>(EMPTY_FORM);
  const set = (changes: Partial<TaskForm>) => setForm((f) => ({ ...f, ...changes }));
  const { error, run } = useActionError();
  const create = async () => {
    if (!(await run(() => unwrap(api.POST('/api/tasks/', { body: taskBody(form) }))))) return;
    set({ name: '' });
    onCreated();
  };
  return (
    <Stack gap="xs">
      <ActionError error={error} title="Not scheduled" />
      <Group align="end" wrap="wrap">
        <TextInput label="Task name" value={form.name} onChange={(e) => set({ name: e.currentTarget.value })} />
        <Select
          label="Type"
          allowDeselect={false}
          value={form.type}
          onChange={(v) => set({ type: (v ?? 'backup') as TaskType })}
          data={[
            { value: 'backup', label: 'Backup of devices' },
            { value: 'snapshot', label: 'Collect a snapshot' },
            { value: 'deployment', label: 'Deploy an instance' },
          ]}
          w={200}
        />
        <TaskTarget form={form} set={set} />
        <TextInput
          label="Cron"
          description="min hour day month weekday"
          value={form.cron}
          onChange={(e) => set({ cron: e.currentTarget.value })}
          w={190}
        />
        <TextInput
          label="Time zone"
          description="e.g. UTC, Europe/Paris"
          value={form.timezone}
          onChange={(e) => set({ timezone: e.currentTarget.value })}
          w={190}
        />
        <Button onClick={() => void create()} disabled={!form.name.trim()}>
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
    device_filter: { site_id?: string; device_type?: string; device_ids?: string[] };
  }[];
  const sites = useSites();
  const siteName = (id: string) => sites.data?.sites.find((site) => site.id === id)?.name ?? 'a deleted site';
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
                <Table.Td>
                  {t.type}
                  <Text size="xs" c="dimmed">
                    {filterText(t.device_filter, siteName)}
                  </Text>
                </Table.Td>
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
