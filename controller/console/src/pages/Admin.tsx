import { Button, Table, Tabs, Text } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { ListQuery } from '../components/ListQuery';
import { ErrorNote, Page } from '../components/Page';
import { dateTime } from '../lib/format';
import { useCan } from '../lib/me';
import { Audit } from './admin/Audit';
import { Settings } from './admin/Settings';
import { Users } from './admin/Users';

function Sessions() {
  const client = useQueryClient();
  const sessions = useQuery({ queryKey: ['sessions'], queryFn: () => unwrap(api.GET('/api/auth/sessions')) });
  const revoke = async (id: string) => {
    await api.DELETE('/api/auth/sessions/{id}', { params: { path: { id } } });
    void client.invalidateQueries({ queryKey: ['sessions'] });
  };
  if (sessions.error) return <ErrorNote error={sessions.error} />;
  const list =
    (
      sessions.data as
        { sessions?: { id: string; created_at: string; expires_at: string; user_agent: string | null; ip_address: string | null }[] } | undefined
    )?.sessions ?? [];
  return (
    <Table aria-label="Your sessions" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Started</Table.Th>
          <Table.Th>Expires</Table.Th>
          <Table.Th>Client</Table.Th>
          <Table.Th>Address</Table.Th>
          <Table.Th>Revoke</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {list.map((s) => (
          <Table.Tr key={s.id}>
            <Table.Td>{dateTime(s.created_at)}</Table.Td>
            <Table.Td>{dateTime(s.expires_at)}</Table.Td>
            <Table.Td>
              <Text size="xs">{s.user_agent}</Text>
            </Table.Td>
            <Table.Td>{s.ip_address}</Table.Td>
            <Table.Td>
              <Button size="xs" variant="light" color="red" c="red" onClick={() => void revoke(s.id)}>
                Revoke
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** Users and roles, organizations, audit log (administrators), and the caller's own sessions. */
export default function Admin() {
  const canUsers = useCan('users.manage');
  const isPlatform = useCan('platform.admin');
  const canAudit = useCan('audit.read');
  const orgs = useQuery({ queryKey: ['organizations'], queryFn: () => unwrap(api.GET('/api/admin/organizations')), enabled: isPlatform });
  const canSettings = useCan('settings.manage');
  return (
    <Page title="Admin">
      <Tabs defaultValue="sessions" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="sessions">My sessions</Tabs.Tab>
          {canUsers && <Tabs.Tab value="users">Users</Tabs.Tab>}
          {isPlatform && <Tabs.Tab value="orgs">Organizations</Tabs.Tab>}
          {canAudit && <Tabs.Tab value="audit">Audit log</Tabs.Tab>}
          {canSettings && <Tabs.Tab value="settings">Settings</Tabs.Tab>}
        </Tabs.List>
        <Tabs.Panel value="sessions" pt="md">
          <Sessions />
        </Tabs.Panel>
        <Tabs.Panel value="users" pt="md">
          <Users />
        </Tabs.Panel>
        <Tabs.Panel value="orgs" pt="md">
          <ListQuery query={orgs} label="Organizations" empty="No organizations." />
        </Tabs.Panel>
        <Tabs.Panel value="audit" pt="md">
          <Audit />
        </Tabs.Panel>
        <Tabs.Panel value="settings" pt="md">
          <Settings />
        </Tabs.Panel>
      </Tabs>
    </Page>
  );
}
