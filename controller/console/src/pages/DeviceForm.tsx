import { Button, Group, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ActionError } from '../components/ActionError';
import { DEVICE_TYPES } from '../lib/device-types';
import { showRequestError } from '../lib/form-errors';
import { siteOptions, useSites } from '../lib/sites';

export interface DeviceFormValues {
  name: string;
  host: string;
  device_type: string;
  profile_id: string;
  site_id: string;
  manufacturer: string;
  model: string;
  platform: string;
  description: string;
}

const EMPTY: DeviceFormValues = {
  name: '',
  host: '',
  device_type: 'generic',
  profile_id: '',
  site_id: '',
  manufacturer: '',
  model: '',
  platform: '',
  description: '',
};

/** Create (no id) or edit a device; the API's field errors show next to their fields. */
export function DeviceForm({ id, initial, onDone }: { id?: string; initial?: Partial<DeviceFormValues>; onDone: () => void }) {
  const sites = useSites();
  const profiles = useQuery({ queryKey: ['profiles'], queryFn: () => unwrap(api.GET('/api/profiles')) });
  const form = useForm<DeviceFormValues>({
    initialValues: { ...EMPTY, ...initial },
    validate: {
      name: (v) => (v.trim() ? null : 'Name is required'),
      host: (v) => (v.trim() ? null : 'Host is required: an IP address or hostname'),
      profile_id: (v) => (v ? null : 'Choose the connection profile the device logs in with'),
    },
  });
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setFormError(null);
    const body = { ...values, site_id: values.site_id || null };
    try {
      if (id) await unwrap(api.PUT('/api/devices/{id}', { params: { path: { id } }, body }));
      else await unwrap(api.POST('/api/devices', { body }));
      onDone();
    } catch (err) {
      showRequestError(err, values, form.setFieldError, setFormError);
    } finally {
      setBusy(false);
    }
  });

  const profileData = ((profiles.data as { profiles?: { id: string; name: string }[] } | undefined)?.profiles ?? []).map((p) => ({
    value: p.id,
    label: p.name,
  }));
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <ActionError error={formError} />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput label="Name" required {...form.getInputProps('name')} />
          <TextInput label="Host" required description="IP address or hostname" {...form.getInputProps('host')} />
          <Select label="Device type" required data={DEVICE_TYPES} allowDeselect={false} {...form.getInputProps('device_type')} />
          <Select label="Connection profile" required data={profileData} {...form.getInputProps('profile_id')} />
          <Select
            label="Site"
            clearable
            placeholder="No site (default pool)"
            data={siteOptions(sites.data)}
            {...form.getInputProps('site_id')}
            onChange={(v) => form.setFieldValue('site_id', v ?? '')}
          />
          <TextInput label="Manufacturer" {...form.getInputProps('manufacturer')} />
          <TextInput label="Model" {...form.getInputProps('model')} />
          <TextInput label="Platform" {...form.getInputProps('platform')} />
        </SimpleGrid>
        <TextInput label="Description" {...form.getInputProps('description')} />
        <Group justify="flex-end">
          <Button type="submit" loading={busy}>
            {id ? 'Save' : 'Create device'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
