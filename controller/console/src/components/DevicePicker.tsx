import { MultiSelect, Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { useDebouncedValue } from '../lib/use-debounced-value';

/** Devices matching what is typed (server-side search), remembering the names of those picked. */
function useDeviceOptions() {
  const [search, setSearch] = useState('');
  const q = useDebouncedValue(search);
  const found = useQuery({
    queryKey: ['devices', { q, limit: 50 }],
    queryFn: () => unwrap(api.GET('/api/devices', { params: { query: { q: q || undefined, limit: 50 } } })),
  });
  const [known, setKnown] = useState<Record<string, string>>({});
  const options = new Map(Object.entries(known));
  for (const d of found.data?.devices ?? []) options.set(d.id, d.name);
  const data = [...options.entries()].map(([value, label]) => ({ value, label }));
  const remember = (ids: string[]) =>
    setKnown((k) => ({ ...k, ...Object.fromEntries(data.filter((o) => ids.includes(o.value)).map((o) => [o.value, o.label])) }));
  return { data, search, setSearch, remember };
}

export function DevicesPicker({ label, value, onChange }: { label: string; value: string[]; onChange: (ids: string[]) => void }) {
  const o = useDeviceOptions();
  return (
    <MultiSelect
      label={label}
      required
      searchable
      data={o.data}
      value={value}
      searchValue={o.search}
      onSearchChange={o.setSearch}
      onChange={(ids) => {
        o.remember(ids);
        onChange(ids);
      }}
    />
  );
}

export function DevicePicker({ label, value, onChange }: { label: string; value: string | null; onChange: (id: string | null) => void }) {
  const o = useDeviceOptions();
  return (
    <Select
      label={label}
      searchable
      clearable
      data={o.data}
      value={value}
      searchValue={o.search}
      onSearchChange={o.setSearch}
      onChange={(id) => {
        if (id) o.remember([id]);
        onChange(id);
      }}
    />
  );
}
