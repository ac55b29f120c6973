import { Group, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { ListQuery } from '../../components/ListQuery';
import { useDebouncedValue } from '../../lib/use-debounced-value';

/** The audit log, filtered by kind and a time range (dates as typed, sent as ISO times). */
export function Audit() {
  const [kind, setKind] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  // Debounced as text: a new object each render would never settle.
  const filters = JSON.parse(useDebouncedValue(JSON.stringify({ kind, since, until }))) as { kind: string; since: string; until: string };
  const iso = (date: string) => (date && !Number.isNaN(Date.parse(date)) ? new Date(date).toISOString() : undefined);
  const query = { kind: filters.kind || undefined, since: iso(filters.since), until: iso(filters.until), limit: 200 };
  const audit = useQuery({ queryKey: ['audit', query], queryFn: () => unwrap(api.GET('/api/admin/audit', { params: { query } })) });
  return (
    <>
      <Group mb="sm">
        <TextInput label="Kind" placeholder="e.g. auth.logout" value={kind} onChange={(e) => setKind(e.currentTarget.value)} />
        <TextInput label="Since" type="date" value={since} onChange={(e) => setSince(e.currentTarget.value)} />
        <TextInput label="Until" type="date" value={until} onChange={(e) => setUntil(e.currentTarget.value)} />
      </Group>
      <ListQuery query={audit} label="Audit log" empty="No audit entries match." hide={['details']} />
    </>
  );
}
