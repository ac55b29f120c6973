import { Button, Group, Select, Stack, Table, Text, TextInput, Textarea } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import { ActionError, useActionError } from '../components/ActionError';
import { confirmAction } from '../components/confirm';
import { DevicesPicker } from '../components/DevicePicker';
import { Empty, ErrorNote, Page } from '../components/Page';
import { dateTime } from '../lib/format';
import { allServicesOn } from '../lib/variable-values';

interface StackRow {
  id: string;
  name: string;
  services: unknown[];
}

function NewInstance({ onCreated }: { onCreated: () => void }) {
  const stacks = useQuery({ queryKey: ['stacks'], queryFn: () => unwrap(api.GET('/api/config/stacks')) });
  const [stackId, setStackId] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [devices, setDevices] = useState<string[]>([]);
  const { error, run } = useActionError();
  const stackList = (stacks.data ?? []) as StackRow[];
  const create = async () => {
    const stack = stackList.find((s) => s.id === stackId)!;
    const saved = await run(() =>
      unwrap(
        api.POST('/api/config/instances', {
          body: {
            stack_id: stack.id,
            name: name.trim(),
            target_devices: devices.map((device_id) => ({ device_id })),
            variable_values: allServicesOn(stack, devices),
          },
        }),
      ),
    );
    if (!saved) return;
    setName('');
    setDevices([]);
    onCreated();
  };
  return (
    <Stack gap="xs">
      <ActionError error={error} title="Not saved" />
      <Group align="end" wrap="wrap">
        <Select label="Stack" data={stackList.map((s) => ({ value: s.id, label: s.name }))} value={stackId} onChange={setStackId} w={200} />
        <TextInput label="Instance name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <DevicesPicker label="Target devices" value={devices} onChange={setDevices} />
        <Button onClick={() => void create()} disabled={!stackId || !name.trim() || devices.length === 0}>
          Save instance
        </Button>
      </Group>
    </Stack>
  );
}

interface InstanceRow {
  id: string;
  name: string;
  target_devices: unknown[];
  variable_values?: Record<string, unknown>;
  updated_at?: string;
}

/** Changes an instance's name and variable values (JSON, per service position); only those fields are sent. */
function EditInstance({ instance, onDone }: { instance: InstanceRow; onDone: (saved: boolean) => void }) {
  const [name, setName] = useState(instance.name);
  const [values, setValues] = useState(JSON.stringify(instance.variable_values ?? {}, null, 2));
  const { error, run, fail } = useActionError();
  const save = async () => {
    let variableValues: unknown;
    try {
      variableValues = JSON.parse(values);
    } catch (err) {
      return fail(`Variable values are not valid JSON: ${(err as Error).message}`);
    }
    const saved = await run(() =>
      unwrap(
        api.PUT('/api/config/instances/{id}', {
          params: { path: { id: instance.id } },
          body: { name: name.trim(), variable_values: variableValues as never },
        }),
      ),
    );
    if (saved) onDone(true);
  };
  return (
    <Stack
      gap="xs"
      component="form"
      aria-label={`Edit instance ${instance.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Text fw={600}>Edit {instance.name}</Text>
      <ActionError error={error} title="Not saved" />
      <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} w={320} />
      <Textarea
        label="Variable values (JSON)"
        description="Per service position: devices, shared_vars and device_vars"
        value={values}
        onChange={(e) => setValues(e.currentTarget.value)}
        autosize
        minRows={4}
        maxRows={20}
        ff="monospace"
      />
      <Group>
        <Button type="submit" disabled={!name.trim()}>
          Save changes
        </Button>
        <Button variant="default" onClick={() => onDone(false)}>
          Cancel
        </Button>
      </Group>
    </Stack>
  );
}

/** Saved instances (a stack with targets and values): create, edit, deploy again, delete. */
export default function Instances() {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const instances = useQuery({ queryKey: ['instances'], queryFn: () => unwrap(api.GET('/api/config/instances')) });
  const { error, run } = useActionError();
  const refresh = () => void client.invalidateQueries({ queryKey: ['instances'] });
  const list = ((Array.isArray(instances.data) ? instances.data : (instances.data as { instances?: unknown[] } | undefined)?.instances) ??
    []) as InstanceRow[];
  const [editing, setEditing] = useState<string | null>(null);
  const current = list.find((i) => i.id === editing);
  const deploy = (id: string) =>
    run(async () => {
      const deployment = await unwrap(api.POST('/api/config/instances/{id}/deploy', { params: { path: { id } }, body: {} }));
      navigate(`/deployments/${(deployment as { id: string }).id}`);
    });
  const remove = async (id: string, name: string) => {
    if (!(await confirmAction('Delete instance', `Delete the instance ${name}? Scheduled tasks that deploy it stop working.`, 'Delete'))) return;
    await run(() => unwrap(api.DELETE('/api/config/instances/{id}', { params: { path: { id } } })));
    refresh();
  };
  return (
    <Page title="Instances">
      <NewInstance onCreated={refresh} />
      <ActionError error={error} title="Not done" />
      <ErrorNote error={instances.error} />
      {current && (
        <EditInstance
          key={current.id}
          instance={current}
          onDone={(saved) => {
            setEditing(null);
            if (saved) refresh();
          }}
        />
      )}
      {instances.data && list.length === 0 && <Empty>No instances yet: save a stack with its targets to deploy it again or on a schedule.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Instances">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Devices</Table.Th>
              <Table.Th>Updated</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((i) => (
              <Table.Tr key={i.id}>
                <Table.Td>{i.name}</Table.Td>
                <Table.Td>{i.target_devices.length}</Table.Td>
                <Table.Td>{dateTime(i.updated_at)}</Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button size="xs" variant="light" onClick={() => void deploy(i.id)} aria-label={`Deploy ${i.name}`}>
                      Deploy
                    </Button>
                    <Button size="xs" variant="light" onClick={() => setEditing(i.id)} aria-label={`Edit ${i.name}`}>
                      Edit
                    </Button>
                    <Button size="xs" variant="light" color="red" c="red" onClick={() => void remove(i.id, i.name)} aria-label={`Delete ${i.name}`}>
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Page>
  );
}
