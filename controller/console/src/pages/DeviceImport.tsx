import { Alert, Button, FileInput, Group, List, SegmentedControl, Select, Stack, Text, Textarea } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api, unwrap } from '../api/client';
import { currentToken } from '../auth/session';
import { ActionError, useActionError } from '../components/ActionError';

interface Summary {
  imported: number;
  failed: number;
  errors: { row: number; name: string; error: string }[];
}

/**
 * CSV or JSON import. The body is raw text (text/csv), which the generated client does not model
 * as a typed body, so this one call uses fetch with the same bearer token.
 */
async function postImport(format: 'csv' | 'json', text: string, profileId: string | null): Promise<Summary> {
  const query = profileId ? `?profile_id=${encodeURIComponent(profileId)}` : '';
  const res = await fetch(`/api/devices/import/${format}${query}`, {
    method: 'POST',
    headers: { 'content-type': format === 'csv' ? 'text/csv' : 'application/json', authorization: `Bearer ${currentToken()}` },
    body: text,
  });
  const body = (await res.json().catch(() => ({}))) as Summary & { error?: string };
  if (!res.ok) throw new ApiError(body.error ?? `${res.status} ${res.statusText}`, res.status, body);
  return body;
}

/** Paste or choose a file; every failing row is listed with its reason. */
export function DeviceImport({ onImported }: { onImported: () => void }) {
  const [format, setFormat] = useState<'csv' | 'json'>('csv');
  const [text, setText] = useState('');
  const [summary, setSummary] = useState<Summary | null>(null);
  const { error, run } = useActionError();
  const [busy, setBusy] = useState(false);
  const [profileId, setProfileId] = useState<string | null>(null);
  const profiles = useQuery({ queryKey: ['profiles'], queryFn: () => unwrap(api.GET('/api/profiles')) });

  const load = async (file: File | null) => {
    if (!file) return;
    setText(await file.text());
    if (file.name.endsWith('.json')) setFormat('json');
  };
  const submit = async () => {
    setBusy(true);
    setSummary(null);
    const imported = await run(async () => setSummary(await postImport(format, text, profileId)));
    setBusy(false);
    if (imported) onImported();
  };

  return (
    <Stack>
      <Text size="sm">
        Columns: name, host, device_type (required), manufacturer, model, platform, site, description. Devices get the profile chosen here, else the
        default connection profile.
      </Text>
      <Select
        label="Connection profile"
        placeholder="Default profile"
        clearable
        data={(profiles.data?.profiles ?? []).map((p) => ({ value: p.id, label: p.name }))}
        value={profileId}
        onChange={setProfileId}
      />
      <Group>
        <SegmentedControl
          aria-label="Format"
          value={format}
          onChange={(v) => setFormat(v as 'csv' | 'json')}
          data={[
            { label: 'CSV', value: 'csv' },
            { label: 'JSON', value: 'json' },
          ]}
        />
        <FileInput
          label="File"
          placeholder="Choose a .csv or .json file"
          accept=".csv,.json,text/csv,application/json"
          onChange={(f) => void load(f)}
          w={260}
        />
      </Group>
      <Textarea
        label="Or paste the rows"
        autosize
        minRows={5}
        maxRows={14}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        ff="monospace"
      />
      <Group justify="flex-end">
        <Button onClick={() => void submit()} loading={busy} disabled={!text.trim()}>
          Import
        </Button>
      </Group>
      <ActionError error={error} title="Import refused" />
      {summary && (
        <Alert
          color={summary.failed ? 'yellow' : 'green'}
          title={`${summary.imported} imported, ${summary.failed} failed`}
          data-testid="import-summary"
        >
          {summary.errors.length > 0 && (
            <List size="sm" aria-label="Rows that failed">
              {summary.errors.map((e) => (
                <List.Item key={`${e.row}-${e.name}`}>
                  Row {e.row}
                  {e.name ? ` (${e.name})` : ''}: {e.error}
                </List.Item>
              ))}
            </List>
          )}
        </Alert>
      )}
    </Stack>
  );
}
