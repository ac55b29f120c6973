import { Anchor, Button, Modal, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, unwrap } from '../api/client';
import { useActionError } from '../components/ActionError';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { dateTime } from '../lib/format';
import { DevicesPicker } from '../components/DevicePicker';
import { useLive } from '../live/use-live';

function StartDeployment({ onStarted }: { onStarted: (id: string) => void }) {
  const stacks = useQuery({ queryKey: ['stacks'], queryFn: () => unwrap(api.GET('/api/config/stacks')) });
  const [stackId, setStackId] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [devices, setDevices] = useState<string[]>([]);
  const { error, run } = useActionError();
  const start = () =>
    run(async () => {
      const created = await unwrap(
        api.POST('/api/config/deployments', {
          body: { stack_id: stackId!, name: name.trim(), target_devices: devices.map((device_id) => ({ device_id })) },
        }),
      );
      onStarted(created.id);
    });
  const stackList = (Array.isArray(stacks.data) ? stacks.data : []) as { id: string; name: string }[];
  return (
    <Stack>
      {error && <ErrorNote error={new Error(error)} action="Nothing was pushed." />}
      <Select label="Stack" required data={stackList.map((s) => ({ value: s.id, label: s.name }))} value={stackId} onChange={setStackId} />
      <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
      <DevicesPicker label="Target devices" value={devices} onChange={setDevices} />
      <Button onClick={() => void start()} disabled={!stackId || !name.trim() || devices.length === 0}>
        Start deployment
      </Button>
    </Stack>
  );
}

/** Deployment history, live; start one from a stack. */
export default function Deployments() {
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const [starting, setStarting] = useState(false);
  const deployments = useQuery({ queryKey: ['deployments'], queryFn: () => unwrap(api.GET('/api/config/deployments')) });
  useLive(['deployment'], () => void client.invalidateQueries({ queryKey: ['deployments'] }));
  const list = deployments.data ?? [];
  return (
    <Page title="Deployments" actions={<Button onClick={() => setStarting(true)}>Start deployment</Button>}>
      <ErrorNote error={deployments.error} />
      {deployments.data && list.length === 0 && <Empty>No deployments yet: create a stack, then start a deployment of it.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Deployments">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Devices</Table.Th>
              <Table.Th>Started</Table.Th>
              <Table.Th>Finished</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((d) => (
              <Table.Tr key={d.id}>
                <Table.Td>
                  <Anchor component={Link} href={`/deployments/${d.id}`}>
                    {d.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={d.status} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {d.succeeded_count} ok, {d.failed_count} failed of {d.total_devices}
                  </Text>
                </Table.Td>
                <Table.Td>{dateTime(d.started_at)}</Table.Td>
                <Table.Td>{dateTime(d.completed_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={starting} onClose={() => setStarting(false)} title="Start deployment" size="lg">
        <StartDeployment
          onStarted={(id) => {
            setStarting(false);
            navigate(`/deployments/${id}`);
          }}
        />
      </Modal>
    </Page>
  );
}
