import { Alert, Button, Group, PasswordInput, Stack, Table, Text, TextInput } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { ErrorNote } from '../../components/Page';
import { oidcTestSummary } from '../../lib/oidc-test';
import { parseSetting, settingRows } from '../../lib/settings';

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Effective settings, edited in place; LDAP has its test button. Secrets are write-only. */
export function Settings() {
  const client = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => unwrap(api.GET('/api/admin/settings')) });
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const rows = settingRows(settings.data?.settings ?? {});
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const save = async () => {
    setMessage(null);
    const changed = Object.fromEntries(Object.entries(edits).map(([k, v]) => [k, parseSetting(v, byKey.get(k))]));
    try {
      await unwrap(api.PUT('/api/admin/settings', { body: { settings: changed } }));
      setEdits({});
      setMessage({ ok: true, text: `Saved ${Object.keys(changed).length} setting(s).` });
      void client.invalidateQueries({ queryKey: ['settings'] });
    } catch (err) {
      setMessage({ ok: false, text: (err as Error).message });
    }
  };
  const testLdap = async () => {
    const { data, error } = await api.POST('/api/auth/ldap/test');
    setMessage(
      error ? { ok: false, text: (error as { error?: string }).error ?? 'LDAP test failed' } : { ok: true, text: `LDAP: ${JSON.stringify(data)}` },
    );
  };
  const testOidc = async () => {
    const { data, error } = await api.POST('/api/auth/oidc/test');
    setMessage(data ? oidcTestSummary(data) : { ok: false, text: (error as { error?: string } | undefined)?.error ?? 'OIDC test failed' });
  };
  if (settings.error) return <ErrorNote error={settings.error} />;
  return (
    <Stack>
      {message && (
        <Alert color={message.ok ? 'green' : 'red'} role="status">
          {message.text}
        </Alert>
      )}
      <Group>
        <Button onClick={() => void save()} disabled={Object.keys(edits).length === 0}>
          Save changes
        </Button>
        <Button variant="default" onClick={() => void testLdap()}>
          Test LDAP bind
        </Button>
        <Button variant="default" onClick={() => void testOidc()}>
          Test OIDC issuer
        </Button>
      </Group>
      <Table aria-label="Settings" fz="sm">
        <Table.Tbody>
          {rows.map(({ key, value, secret }) => (
            <Table.Tr key={key}>
              <Table.Td>
                <Text size="sm" ff="monospace">
                  {key}
                </Text>
              </Table.Td>
              <Table.Td>
                {secret ? (
                  <PasswordInput
                    aria-label={key}
                    placeholder={value ? 'set (enter a new one to replace it)' : 'not set'}
                    value={edits[key] ?? ''}
                    onChange={(e) => setEdits({ ...edits, [key]: e.currentTarget.value })}
                    autoComplete="new-password"
                  />
                ) : (
                  <TextInput
                    aria-label={key}
                    value={edits[key] ?? asText(value)}
                    onChange={(e) => setEdits({ ...edits, [key]: e.currentTarget.value })}
                  />
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
