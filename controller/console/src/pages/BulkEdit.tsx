import { Button, Select, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ActionError, useActionError } from '../components/ActionError';
import { siteOptions, useSites } from '../lib/sites';

/** Sets the filled-in fields on every selected device (PATCH /api/devices/bulk); blank fields stay as they are. */
export function BulkEdit({ ids, onDone }: { ids: string[]; onDone: () => void }) {
  const sites = useSites();
  const [siteId, setSiteId] = useState<string | null>(null);
  const [platform, setPlatform] = useState('');
  const [manufacturer, setManufacturer] = useState('');
  const { error, run } = useActionError();
  const fields: Record<string, string> = {};
  if (siteId) fields.site_id = siteId;
  if (platform.trim()) fields.platform = platform.trim();
  if (manufacturer.trim()) fields.manufacturer = manufacturer.trim();
  const save = async () => {
    if (await run(() => unwrap(api.PATCH('/api/devices/bulk', { body: { ids, fields } })))) onDone();
  };
  return (
    <Stack>
      <ActionError error={error} />
      <Select label="Site" clearable data={siteOptions(sites.data)} value={siteId} onChange={setSiteId} />
      <TextInput label="Manufacturer" value={manufacturer} onChange={(e) => setManufacturer(e.currentTarget.value)} />
      <TextInput label="Platform" value={platform} onChange={(e) => setPlatform(e.currentTarget.value)} />
      <Button onClick={() => void save()} disabled={Object.keys(fields).length === 0}>
        Apply to {ids.length} devices
      </Button>
    </Stack>
  );
}
