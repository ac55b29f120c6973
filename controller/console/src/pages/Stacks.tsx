import { Button, Card, Group, Stack as Column, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ActionError, useActionError } from '../components/ActionError';
import { DevicePicker } from '../components/DevicePicker';
import { Empty, ErrorNote, Page } from '../components/Page';
import { allServicesOn } from '../lib/variable-values';

interface StackRow {
  id: string;
  name: string;
  description?: string;
  atomic?: boolean;
  services: { template_id: string; order: number }[];
}

interface RenderJob {
  device_name: string;
  template_name: string;
  service_order: number;
  rendered_config: string;
}

/** Renders every service of the stack for one device (POST /stacks/:id/render); nothing is pushed. */
function RenderPreview({ stack }: { stack: StackRow }) {
  const [deviceId, setDeviceId] = useState<string | null>(null);
  const [jobs, setJobs] = useState<RenderJob[] | null>(null);
  const { error, run } = useActionError();
  const render = async () => {
    setJobs(null);
    const variable_values = allServicesOn(stack, [deviceId!]);
    await run(async () =>
      setJobs(
        (await unwrap(api.POST('/api/config/stacks/{id}/render', { params: { path: { id: stack.id } }, body: { variable_values } })))
          .jobs as RenderJob[],
      ),
    );
  };
  return (
    <Column gap="xs">
      <Group align="end">
        <DevicePicker label={`Preview ${stack.name} for device`} value={deviceId} onChange={setDeviceId} />
        <Button variant="light" disabled={!deviceId} onClick={() => void render()}>
          Render
        </Button>
      </Group>
      <ActionError error={error} />
      {jobs?.map((j) => (
        <Card withBorder key={`${j.service_order}-${j.template_name}`} p="xs">
          <Text size="sm" fw={600}>
            {j.service_order}. {j.template_name} → {j.device_name}
          </Text>
          <Text component="pre" fz="xs" style={{ whiteSpace: 'pre-wrap', margin: 0 }}>
            {j.rendered_config}
          </Text>
        </Card>
      ))}
    </Column>
  );
}

/** Stacks: ordered services of templates, with a render preview for a chosen device. */
export default function Stacks() {
  const stacks = useQuery({ queryKey: ['stacks'], queryFn: () => unwrap(api.GET('/api/config/stacks')) });
  const [open, setOpen] = useState<string | null>(null);
  const list = (stacks.data ?? []) as StackRow[];
  return (
    <Page title="Stacks">
      <ErrorNote error={stacks.error} />
      {stacks.data && list.length === 0 && (
        <Empty>No stacks yet: a stack groups templates into services to deploy together (POST /api/config/stacks).</Empty>
      )}
      {list.length > 0 && (
        <Table striped aria-label="Stacks">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Services</Table.Th>
              <Table.Th>Atomic</Table.Th>
              <Table.Th>Preview</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>
                  {s.name}
                  <Text size="xs" c="dimmed">
                    {s.description}
                  </Text>
                </Table.Td>
                <Table.Td>{s.services.length}</Table.Td>
                <Table.Td>{s.atomic === false ? 'no' : 'yes'}</Table.Td>
                <Table.Td>
                  <Button size="xs" variant="subtle" onClick={() => setOpen(open === s.id ? null : s.id)} aria-expanded={open === s.id}>
                    Render preview
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {list
        .filter((s) => s.id === open)
        .map((s) => (
          <RenderPreview key={s.id} stack={s} />
        ))}
    </Page>
  );
}
