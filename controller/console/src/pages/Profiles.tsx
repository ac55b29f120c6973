import {
  Button,
  Group,
  Modal,
  NumberInput,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
} from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { paths } from '../api/schema';
import { ActionError, useActionError } from '../components/ActionError';
import { confirmAction } from '../components/confirm';
import { Empty, ErrorNote, Page } from '../components/Page';
import { showRequestError } from '../lib/form-errors';
import { useSites } from '../lib/sites';

/** A connection profile as listed: its secrets only as has_* flags (they are write-only). */
type Profile = paths['/api/profiles']['get']['responses'][200]['content']['application/json']['profiles'][number];

interface ProfileFormValues {
  name: string;
  username: string;
  password: string;
  enable_password: string;
  private_key: string;
  ssh_port: number;
  netconf_port: number;
  gnmi_port: number;
  gnmi_tls: boolean;
  gnmi_skip_verify: boolean;
  automation_transport: string;
}

const NEW_PROFILE: ProfileFormValues = {
  name: '',
  username: '',
  password: '',
  enable_password: '',
  private_key: '',
  ssh_port: 22,
  netconf_port: 830,
  gnmi_port: 9339,
  gnmi_tls: true,
  gnmi_skip_verify: false,
  automation_transport: '',
};

/** A stored profile in the form: its fields, the secrets empty (they are never sent back). */
function formValues(p: Profile): ProfileFormValues {
  const { name, username, ssh_port, netconf_port, gnmi_port, gnmi_tls, gnmi_skip_verify } = p;
  return {
    ...NEW_PROFILE,
    name,
    username,
    ssh_port,
    netconf_port,
    gnmi_port,
    gnmi_tls,
    gnmi_skip_verify,
    automation_transport: p.automation_transport ?? '',
  };
}

/** The request body: a secret goes only when typed (an empty field keeps the stored one). */
function profileBody({ password, enable_password, private_key, automation_transport, ...rest }: ProfileFormValues) {
  return {
    ...rest,
    automation_transport: (automation_transport || null) as 'gnmi' | 'netconf' | null,
    ...(password && { password }),
    ...(enable_password && { enable_password }),
    ...(private_key.trim() && { private_key }),
  };
}

/** What a secret field says when editing: whether one is stored, which typing replaces. */
const secretHint = (stored: boolean | undefined) => (stored ? 'Stored; type to replace it' : undefined);

/** Create (no profile) or edit a connection profile; the API's field errors show next to their fields. */
function ProfileForm({ profile, onDone }: { profile?: Profile; onDone: () => void }) {
  const form = useForm<ProfileFormValues>({
    initialValues: profile ? formValues(profile) : NEW_PROFILE,
    validate: { name: (v) => (v.trim() ? null : 'Name is required') },
  });
  const [formError, setFormError] = useState<string | null>(null);
  const submit = form.onSubmit(async (values) => {
    setFormError(null);
    const body = profileBody(values);
    try {
      if (profile) await unwrap(api.PUT('/api/profiles/{id}', { params: { path: { id: profile.id } }, body }));
      else await unwrap(api.POST('/api/profiles', { body }));
      onDone();
    } catch (err) {
      showRequestError(err, values, form.setFieldError, setFormError);
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <ActionError error={formError} />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Name" required {...form.getInputProps('name')} />
          <TextInput label="Username" {...form.getInputProps('username')} />
          <PasswordInput label="Password" description={secretHint(profile?.has_password)} {...form.getInputProps('password')} />
          <PasswordInput label="Enable password" description={secretHint(profile?.has_enable_password)} {...form.getInputProps('enable_password')} />
        </SimpleGrid>
        <Textarea
          label="SSH private key"
          description={secretHint(profile?.has_private_key) ?? 'PEM or OpenSSH; write-only'}
          autosize
          minRows={2}
          maxRows={6}
          {...form.getInputProps('private_key')}
        />
        <SimpleGrid cols={{ base: 1, sm: 3 }}>
          <NumberInput label="SSH port" min={1} max={65535} {...form.getInputProps('ssh_port')} />
          <NumberInput label="NETCONF port" min={1} max={65535} {...form.getInputProps('netconf_port')} />
          <NumberInput label="gNMI port" min={1} max={65535} {...form.getInputProps('gnmi_port')} />
        </SimpleGrid>
        <Select
          label="Automation transport"
          description="How deployments and structured backups reach the devices; none: the SSH CLI"
          data={[
            { value: '', label: 'None (SSH CLI)' },
            { value: 'netconf', label: 'NETCONF' },
            { value: 'gnmi', label: 'gNMI' },
          ]}
          allowDeselect={false}
          {...form.getInputProps('automation_transport')}
        />
        <Group>
          <Switch label="gNMI over TLS" {...form.getInputProps('gnmi_tls', { type: 'checkbox' })} />
          <Switch label="Skip gNMI certificate checks" {...form.getInputProps('gnmi_skip_verify', { type: 'checkbox' })} />
        </Group>
        <Group justify="flex-end">
          <Button type="submit" loading={form.submitting}>
            {profile ? 'Save' : 'Create profile'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/** The secrets a profile holds, in words (never their values: the API does not return them). */
function secretsText(p: Profile): string {
  const held = [p.has_password && 'password', p.has_enable_password && 'enable password', p.has_private_key && 'private key'].filter(Boolean);
  return held.length > 0 ? held.join(', ') : 'none';
}

/** The organization's sites: add one by name, delete one (its devices go to the default pool). */
function Sites() {
  const client = useQueryClient();
  const sites = useSites();
  const [name, setName] = useState('');
  const { error, run } = useActionError();
  const refresh = () => void client.invalidateQueries({ queryKey: ['sites'] });
  const add = async () => {
    if (!(await run(() => unwrap(api.POST('/api/sites', { body: { name: name.trim() } }))))) return;
    setName('');
    refresh();
  };
  const remove = async (id: string, siteName: string) => {
    if (!(await confirmAction('Delete site', `Delete the site ${siteName}?`, 'Delete'))) return;
    await run(() => unwrap(api.DELETE('/api/sites/{id}', { params: { path: { id } } })));
    refresh();
  };
  const list = sites.data?.sites ?? [];
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        Sites
      </Title>
      <ActionError error={error} title="Not done" />
      <Group align="end">
        <TextInput label="New site name" value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Button onClick={() => void add()} disabled={!name.trim()}>
          Add site
        </Button>
      </Group>
      <ErrorNote error={sites.error} />
      {sites.data && list.length === 0 && <Empty>No sites yet: devices without a site are served by the default pool.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Sites">
          <Table.Tbody>
            {list.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>{s.name}</Table.Td>
                <Table.Td ta="right">
                  <Button
                    size="xs"
                    variant="light"
                    color="red"
                    c="red"
                    onClick={() => void remove(s.id, s.name)}
                    aria-label={`Delete site ${s.name}`}
                  >
                    Delete
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

/** Connection profiles (the credentials and ports devices are reached with) and sites. */
export default function Profiles() {
  const client = useQueryClient();
  const profiles = useQuery({ queryKey: ['profiles'], queryFn: () => unwrap(api.GET('/api/profiles')) });
  const [editing, setEditing] = useState<Profile | 'new' | null>(null);
  const { error, run } = useActionError();
  const list = profiles.data?.profiles ?? [];
  const done = () => {
    setEditing(null);
    void client.invalidateQueries({ queryKey: ['profiles'] });
  };
  const remove = async (p: Profile) => {
    if (!(await confirmAction('Delete profile', `Delete the connection profile ${p.name}?`, 'Delete'))) return;
    await run(() => unwrap(api.DELETE('/api/profiles/{id}', { params: { path: { id: p.id } } })));
    void client.invalidateQueries({ queryKey: ['profiles'] });
  };
  return (
    <Page title="Profiles and sites" actions={<Button onClick={() => setEditing('new')}>New profile</Button>}>
      <Text size="sm" c="dimmed">
        A connection profile holds the username, secrets and ports its devices are reached with. Secrets are write-only: stored encrypted, never shown
        again.
      </Text>
      <ActionError error={error} title="Not deleted" />
      <ErrorNote error={profiles.error} />
      {profiles.data && list.length === 0 && <Empty>No connection profiles yet: a device needs one to be reached.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Connection profiles">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Username</Table.Th>
              <Table.Th>Secrets</Table.Th>
              <Table.Th>Transport</Table.Th>
              <Table.Th>Devices</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>{p.name}</Table.Td>
                <Table.Td>{p.username}</Table.Td>
                <Table.Td>{secretsText(p)}</Table.Td>
                <Table.Td>{p.automation_transport ?? 'SSH CLI'}</Table.Td>
                <Table.Td>{p.device_count}</Table.Td>
                <Table.Td>
                  <Group gap="xs">
                    <Button size="xs" variant="light" onClick={() => setEditing(p)} aria-label={`Edit profile ${p.name}`}>
                      Edit
                    </Button>
                    <Button size="xs" variant="light" color="red" c="red" onClick={() => void remove(p)} aria-label={`Delete profile ${p.name}`}>
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Sites />
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' ? 'New connection profile' : 'Edit connection profile'}
        size="lg"
      >
        {editing !== null && <ProfileForm profile={editing === 'new' ? undefined : editing} onDone={done} />}
      </Modal>
    </Page>
  );
}
