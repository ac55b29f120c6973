import { Alert, Badge, Button, Group, MultiSelect, PasswordInput, Stack, Switch, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { ActionError, useActionError } from '../../components/ActionError';
import { Empty, ErrorNote } from '../../components/Page';

interface UserRow {
  id: string;
  username: string;
  roles: string[];
  is_active: boolean;
  auth_provider: string;
}

function useRoleOptions(): { value: string; label: string }[] {
  const roles = useQuery({ queryKey: ['roles'], queryFn: () => unwrap(api.GET('/api/admin/roles')) });
  return (roles.data?.roles ?? []).map((r) => ({ value: r.name, label: r.name }));
}

/** Creates a local user; the password is write-only (never read back or shown). */
function NewUser({ onCreated }: { onCreated: () => void }) {
  const roleOptions = useRoleOptions();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [roles, setRoles] = useState<string[]>([]);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const create = async () => {
    setMessage(null);
    try {
      const user = await unwrap(api.POST('/api/admin/users', { body: { username: username.trim(), password, roles } }));
      setUsername('');
      setPassword('');
      setRoles([]);
      setMessage({ ok: true, text: `Created user ${user.username}.` });
      onCreated();
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  };
  return (
    <Stack
      gap="xs"
      component="form"
      aria-label="New user"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      {message && (
        <Alert color={message.ok ? 'green' : 'red'} role={message.ok ? 'status' : 'alert'} title={message.ok ? undefined : 'User not created'}>
          {message.text}
        </Alert>
      )}
      <Group align="end" wrap="wrap">
        <TextInput label="New username" value={username} onChange={(e) => setUsername(e.currentTarget.value)} autoComplete="off" />
        <PasswordInput
          label="New user's password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          autoComplete="new-password"
          w={220}
        />
        <MultiSelect label="Roles of the new user" data={roleOptions} value={roles} onChange={setRoles} w={260} />
        <Button type="submit" disabled={!username.trim()}>
          Create user
        </Button>
      </Group>
    </Stack>
  );
}

/** Changes one user's roles and enabled state; each goes through its own route. */
function EditUser({ user, onDone }: { user: UserRow; onDone: () => void }) {
  const roleOptions = useRoleOptions();
  const [roles, setRoles] = useState<string[]>(user.roles);
  const [active, setActive] = useState(user.is_active);
  const { error, run } = useActionError();
  const rolesChanged = roles.length !== user.roles.length || roles.some((r) => !user.roles.includes(r));
  const save = async () => {
    const saved = await run(async () => {
      if (rolesChanged) await unwrap(api.PUT('/api/admin/users/{id}/roles', { params: { path: { id: user.id } }, body: { roles } }));
      if (active !== user.is_active)
        await unwrap(api.PUT('/api/admin/users/{id}', { params: { path: { id: user.id } }, body: { is_active: active } }));
    });
    if (saved) onDone();
  };
  return (
    <Stack
      gap="xs"
      component="form"
      aria-label={`Edit ${user.username}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Text fw={600}>Edit {user.username}</Text>
      <ActionError error={error} title="Not saved" />
      <Group align="end" wrap="wrap">
        <MultiSelect label="Roles" data={roleOptions} value={roles} onChange={setRoles} w={320} />
        <Switch label="Enabled" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} />
        <Button type="submit" disabled={!rolesChanged && active === user.is_active}>
          Save user
        </Button>
        <Button variant="default" onClick={onDone}>
          Cancel
        </Button>
      </Group>
    </Stack>
  );
}

/** Users of the active organization: create one, change its roles, enable or disable it. */
export function Users() {
  const client = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => unwrap(api.GET('/api/admin/users', { params: { query: { limit: 500 } } })) });
  const [editing, setEditing] = useState<string | null>(null);
  const refresh = () => void client.invalidateQueries({ queryKey: ['users'] });
  const list = (users.data?.users ?? []) as UserRow[];
  const current = list.find((u) => u.id === editing);
  return (
    <Stack>
      <NewUser onCreated={refresh} />
      <ErrorNote error={users.error} />
      {current && (
        <EditUser
          key={current.id}
          user={current}
          onDone={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
      {users.data && list.length === 0 && <Empty>No users.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Users">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Username</Table.Th>
              <Table.Th>Roles</Table.Th>
              <Table.Th>Sign-in</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((u) => (
              <Table.Tr key={u.id}>
                <Table.Td>{u.username}</Table.Td>
                <Table.Td>{u.roles.join(', ')}</Table.Td>
                <Table.Td>{u.auth_provider}</Table.Td>
                <Table.Td>{u.is_active ? 'enabled' : <Badge color="gray">disabled</Badge>}</Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" onClick={() => setEditing(u.id)} aria-label={`Edit ${u.username}`}>
                    Edit
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
