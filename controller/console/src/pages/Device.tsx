import { Anchor, Button, Card, Group, Modal, SimpleGrid, Stack, Tabs, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { lazy, useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { api } from '../api/client';
import { confirmAction } from '../components/confirm';
import { Deferred } from '../components/Deferred';
import { ErrorNote, Page } from '../components/Page';
import { dateTime } from '../lib/format';
import { configsQuery, deviceQuery, profilesQuery } from '../lib/queries';
import { Backups } from './device/Backups';
import { Discovery } from './device/Discovery';

// The edit form loads when first opened.
const DeviceForm = lazy(() => import('./DeviceForm').then((m) => ({ default: m.DeviceForm })));

function Fact({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm">{value || '—'}</Text>
    </div>
  );
}

type FullDevice = Awaited<ReturnType<ReturnType<typeof deviceQuery>['queryFn']>>;

/** The device's row from a list already shown (summary fields only), to draw the page before the full record arrives. */
function fromLists(client: QueryClient, id: string): FullDevice | undefined {
  for (const [, list] of client.getQueriesData<{ devices: { id: string }[] }>({ queryKey: ['devices'] })) {
    const row = list?.devices.find((d) => d.id === id);
    if (row) return row as FullDevice;
  }
  return undefined;
}

/** One device: facts, pinned identities, backups and discovery. */
export default function Device() {
  const { id } = useParams<{ id: string }>();
  const client = useQueryClient();
  const [, navigate] = useLocation();
  const [editing, setEditing] = useState(false);
  // All three requests at once; the list row (if any) stands in for the device until it arrives.
  const device = useQuery({ ...deviceQuery(id), placeholderData: () => fromLists(client, id) });
  const profiles = useQuery(profilesQuery);
  useQuery(configsQuery(id));
  const d = device.data;
  if (device.error)
    return (
      <Page title="Device">
        <ErrorNote error={device.error} action="The device may have been deleted; go back to Devices." />
      </Page>
    );
  if (!d) return null;
  // Drawn from the list's summary row until the full record arrives.
  const partial = device.isPlaceholderData;
  const profile = (profiles.data?.profiles ?? []).find((p) => p.id === d.profile_id);

  const forget = async (which: 'ssh-host-key' | 'gnmi-certificate') => {
    if (
      !(await confirmAction(
        'Reset pinned identity',
        'The next session trusts whatever the device presents. Do this only after the device was replaced or re-keyed.',
        'Reset',
      ))
    )
      return;
    const { error } = await api.DELETE(`/api/devices/{id}/${which}`, { params: { path: { id } } });
    if (error) notifications.show({ color: 'red', title: 'Reset failed', message: (error as { error: string }).error });
    void client.invalidateQueries({ queryKey: ['device', id] });
  };
  const remove = async () => {
    if (!(await confirmAction('Delete device', `Delete ${d.name} and its stored backups?`, 'Delete'))) return;
    const { error } = await api.DELETE('/api/devices/{id}', { params: { path: { id } } });
    if (error) return notifications.show({ color: 'red', title: 'Delete failed', message: (error as { error: string }).error });
    void client.invalidateQueries({ queryKey: ['devices'] });
    navigate('/devices');
  };

  return (
    <Page
      title={d.name}
      actions={
        <>
          <Button variant="default" onClick={() => setEditing(true)} disabled={partial}>
            Edit
          </Button>
          <Button color="red" variant="light" c="red" onClick={() => void remove()}>
            Delete
          </Button>
        </>
      }
    >
      <Anchor component={Link} href="/devices" size="sm">
        ← Devices
      </Anchor>
      <Card withBorder>
        <SimpleGrid cols={{ base: 2, sm: 4 }}>
          <Fact label="Host" value={d.host} />
          <Fact label="Type" value={d.device_type} />
          <Fact label="Vendor / model" value={[d.manufacturer, d.model].filter(Boolean).join(' ')} />
          <Fact label="Platform" value={partial ? '…' : d.platform} />
          <Fact label="Site" value={d.site} />
          <Fact label="Profile" value={profile?.name ?? d.profile_id} />
          <Fact label="Source" value={d.source} />
          <Fact label="Polling" value={partial ? '…' : d.poll_enabled ? `every ${d.poll_interval_minutes ?? 'default'} min` : 'off'} />
        </SimpleGrid>
      </Card>
      {!partial && (
        <Card withBorder>
          <Stack gap="xs">
            <Group justify="space-between">
              <Fact
                label="Pinned SSH host key"
                value={
                  d.ssh_host_key ? `${d.ssh_host_key.type} ${d.ssh_host_key.fingerprint} (since ${dateTime(d.ssh_host_key.seen_at)})` : 'none yet'
                }
              />
              {d.ssh_host_key && (
                <Button size="xs" variant="light" onClick={() => void forget('ssh-host-key')}>
                  Reset host key
                </Button>
              )}
            </Group>
            <Group justify="space-between">
              <Fact
                label="Pinned gNMI certificate"
                value={d.gnmi_certificate ? `${d.gnmi_certificate.subject} ${d.gnmi_certificate.sha256}` : 'none yet'}
              />
              {d.gnmi_certificate && (
                <Button size="xs" variant="light" onClick={() => void forget('gnmi-certificate')}>
                  Reset certificate
                </Button>
              )}
            </Group>
          </Stack>
        </Card>
      )}
      <Tabs defaultValue="backups" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="backups">Backups</Tabs.Tab>
          <Tabs.Tab value="discovery">Discovery</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="backups" pt="md">
          <Backups deviceId={id} />
        </Tabs.Panel>
        <Tabs.Panel value="discovery" pt="md">
          <Discovery id={id} />
        </Tabs.Panel>
      </Tabs>
      <Modal opened={editing} onClose={() => setEditing(false)} title={`Edit ${d.name}`} size="lg">
        <Deferred>
          <DeviceForm
            id={id}
            initial={{
              name: d.name,
              host: d.host,
              device_type: d.device_type,
              profile_id: d.profile_id,
              site_id: d.site_id ?? '',
              manufacturer: d.manufacturer,
              model: d.model,
              platform: d.platform,
              description: d.description,
            }}
            onDone={() => {
              setEditing(false);
              void client.invalidateQueries({ queryKey: ['device', id] });
            }}
          />
        </Deferred>
      </Modal>
    </Page>
  );
}
