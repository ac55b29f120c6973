import { Button, Code, CopyButton, Group, Modal, Select, Stack, Table, Text, TextInput, VisuallyHidden } from '@mantine/core';
import { useForm } from '@mantine/form';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { confirmAction } from '../components/confirm';
import { Empty, ErrorNote, Page } from '../components/Page';
import { StatusBadge } from '../components/StatusBadge';
import { ago } from '../lib/format';
import { siteOptions, useSites } from '../lib/sites';
import { useLive } from '../live/use-live';

interface Created {
  name: string;
  enrollment_token: string;
  enrollment_expires_at: string;
}

/** The env block that starts an agent with its one-time token. */
export function startCommand(origin: string, token: string): string {
  return `SWITCHBOARD_URL=${origin} \\\nSWITCHBOARD_ENROLL_TOKEN=${token} \\\nNATS_URL=nats://127.0.0.1:4222 \\\nnpm run agent`;
}

function CreateAgent({ onCreated }: { onCreated: (agent: Created) => void }) {
  const sites = useSites();
  const client = useQueryClient();
  const form = useForm({ initialValues: { name: '', site_id: '' }, validate: { name: (v) => (v.trim() ? null : 'Give the agent a name') } });
  const create = useMutation({
    mutationFn: (values: { name: string; site_id: string }) =>
      unwrap(api.POST('/api/agents', { body: { name: values.name.trim(), site_id: values.site_id || null } })),
    onSuccess: (agent) => {
      form.reset();
      void client.invalidateQueries({ queryKey: ['agents'] });
      onCreated(agent);
    },
    onError: (err) => form.setFieldError('name', (err as Error).message),
  });
  return (
    <form onSubmit={form.onSubmit((v) => create.mutate(v))}>
      <Group align="end" wrap="wrap">
        <TextInput label="New agent name" {...form.getInputProps('name')} />
        <Select
          label="Site"
          placeholder="Default pool"
          clearable
          data={siteOptions(sites.data)}
          {...form.getInputProps('site_id')}
          onChange={(v) => form.setFieldValue('site_id', v ?? '')}
        />
        <Button type="submit" loading={create.isPending}>
          Create agent
        </Button>
      </Group>
    </form>
  );
}

/** Agents: health, creation with the one-time enrollment token, revocation. */
export default function Agents() {
  const client = useQueryClient();
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/agents')), refetchInterval: 15_000 });
  const sites = useSites();
  const [created, setCreated] = useState<Created | null>(null);
  useLive(['agent'], () => void client.invalidateQueries({ queryKey: ['agents'] }));
  const siteName = new Map(siteOptions(sites.data).map((s) => [s.value, s.label]));

  const revoke = async (id: string, name: string) => {
    if (
      !(await confirmAction(
        'Revoke agent',
        `Revoke ${name}? It is refused at once and cannot come back; create a new agent to replace it.`,
        'Revoke',
      ))
    )
      return;
    const { error } = await api.DELETE('/api/agents/{id}', { params: { path: { id } } });
    if (error) notifications.show({ color: 'red', title: 'Revoke failed', message: (error as { error: string }).error });
    void client.invalidateQueries({ queryKey: ['agents'] });
  };

  const list = agents.data?.agents ?? [];
  return (
    <Page title="Agents">
      <CreateAgent onCreated={setCreated} />
      <ErrorNote error={agents.error} />
      {agents.data && list.length === 0 && <Empty>No agents yet: create one above and start it with the command shown.</Empty>}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={700}>
          <Table aria-label="Agents" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Site</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Heartbeat</Table.Th>
                <Table.Th>Version</Table.Th>
                <Table.Th>Jobs running</Table.Th>
                <Table.Th>Done / failed</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((a) => (
                <Table.Tr key={a.id} data-agent={a.name}>
                  <Table.Td>
                    {a.name}
                    {a.builtin && (
                      <Text span size="xs" c="dimmed">
                        {' '}
                        (built-in)
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{a.site_id ? (siteName.get(a.site_id) ?? a.site_id) : 'Default pool'}</Table.Td>
                  <Table.Td>{a.enrolled ? <StatusBadge status={a.status} /> : <Text size="sm">awaiting enrollment</Text>}</Table.Td>
                  <Table.Td>{ago(a.last_seen_at)}</Table.Td>
                  <Table.Td>{a.version || '—'}</Table.Td>
                  <Table.Td>
                    {a.active_jobs} of {a.max_jobs}
                  </Table.Td>
                  <Table.Td>
                    {a.completed_jobs} / {a.failed_jobs}
                  </Table.Td>
                  <Table.Td>
                    {!a.builtin && (
                      <Button size="xs" color="red" variant="light" c="red" onClick={() => void revoke(a.id, a.name)} aria-label={`Revoke ${a.name}`}>
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal opened={created !== null} onClose={() => setCreated(null)} title={`Agent ${created?.name ?? ''} created`} size="lg">
        {created && (
          <Stack>
            <Text size="sm">
              This enrollment token is shown only once and expires {new Date(created.enrollment_expires_at).toLocaleString()}. Start the agent with:
            </Text>
            <Code block data-testid="enroll-command">
              {startCommand(window.location.origin, created.enrollment_token)}
            </Code>
            <CopyButton value={startCommand(window.location.origin, created.enrollment_token)}>
              {({ copied, copy }) => (
                <Button onClick={copy} variant="light">
                  {copied ? 'Copied' : 'Copy command'}
                </Button>
              )}
            </CopyButton>
          </Stack>
        )}
      </Modal>
    </Page>
  );
}
