import { Alert, Badge, Button, Group, Modal, Select, SimpleGrid, Stack, Table, Text, TextInput, Textarea } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ActionError, useActionError } from '../components/ActionError';
import { Empty, ErrorNote, Page } from '../components/Page';
import { dateTime } from '../lib/format';
import { useDebouncedValue } from '../lib/use-debounced-value';

const CodeEditor = lazy(() => import('../components/CodeEditor'));

interface Draft {
  name: string;
  platform: string;
  config_format: 'cli' | 'json' | 'xml';
  operation: 'replace' | 'merge' | 'delete';
  target_path: string;
  source: string;
}

const EMPTY: Draft = { name: '', platform: '', config_format: 'cli', operation: 'replace', target_path: '', source: '' };

/** Render with variable values typed as JSON; the API's render error is shown as it is. */
function RenderPreview({ id }: { id: string }) {
  const [variables, setVariables] = useState('{}');
  const [result, setResult] = useState<string | null>(null);
  const { error, run, fail } = useActionError();
  const render = async () => {
    setResult(null);
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(variables) as Record<string, unknown>;
    } catch {
      return fail('Variables must be a JSON object, e.g. {"hostname": "sw1"}');
    }
    await run(async () =>
      setResult((await unwrap(api.POST('/api/config/templates/{id}/render', { params: { path: { id } }, body: { variables: parsed } }))).rendered),
    );
  };
  return (
    <Stack gap="xs">
      <Textarea
        label="Variables (JSON)"
        ff="monospace"
        autosize
        minRows={2}
        value={variables}
        onChange={(e) => setVariables(e.currentTarget.value)}
      />
      <Group>
        <Button variant="light" onClick={() => void render()}>
          Render preview
        </Button>
      </Group>
      <ActionError error={error} />
      {result !== null && (
        <Text component="pre" fz="xs" data-testid="render-result" style={{ whiteSpace: 'pre-wrap' }}>
          {result}
        </Text>
      )}
    </Stack>
  );
}

function Editor({ id, onSaved }: { id: string | null; onSaved: () => void }) {
  const template = useQuery({
    queryKey: ['template', id],
    queryFn: () => unwrap(api.GET('/api/config/templates/{id}', { params: { path: { id: id! } } })),
    enabled: id !== null,
  });
  const versions = useQuery({
    queryKey: ['template-versions', id],
    queryFn: () => unwrap(api.GET('/api/config/templates/{id}/versions', { params: { path: { id: id! } } })),
    enabled: id !== null,
  });
  const t = template.data;
  const [draft, setDraft] = useState<Draft | null>(null);
  const { error, run } = useActionError();
  const current: Draft =
    draft ??
    (t
      ? {
          name: t.name,
          platform: t.platform,
          config_format: t.config_format as Draft['config_format'],
          operation: t.operation as Draft['operation'],
          target_path: t.target_path ?? '',
          source: t.source,
        }
      : EMPTY);
  if (id && !t) return <ErrorNote error={template.error} />;
  const set = (fields: Partial<Draft>) => setDraft({ ...current, ...fields });
  const save = async () => {
    const body = { ...current, target_path: current.target_path || null };
    const saved = await run(() =>
      id
        ? unwrap(api.PUT('/api/config/templates/{id}', { params: { path: { id } }, body }))
        : unwrap(api.POST('/api/config/templates', { body: { ...body, target_path: body.target_path ?? undefined } })),
    );
    if (!saved) return;
    setDraft(null);
    onSaved();
  };
  const versionList = (Array.isArray(versions.data) ? versions.data : ((versions.data as { versions?: unknown[] } | undefined)?.versions ?? [])) as {
    version: number;
    created_at: string;
    created_by: string | null;
  }[];
  return (
    <Stack>
      <ActionError error={error} title="Not saved" />
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Name" required value={current.name} onChange={(e) => set({ name: e.currentTarget.value })} />
        <TextInput label="Platform" required value={current.platform} onChange={(e) => set({ platform: e.currentTarget.value })} />
        <Select
          label="Format"
          data={['cli', 'json', 'xml']}
          allowDeselect={false}
          value={current.config_format}
          onChange={(v) => set({ config_format: (v ?? 'cli') as Draft['config_format'] })}
        />
        <Select
          label="Operation"
          description="merge adds without removing anything"
          data={['replace', 'merge', 'delete']}
          allowDeselect={false}
          value={current.operation}
          onChange={(v) => set({ operation: (v ?? 'replace') as Draft['operation'] })}
        />
        <TextInput
          label="Target path"
          description="The subtree a json or xml replace or delete acts on, e.g. /interfaces/interface[name=eth0]; a label for CLI"
          value={current.target_path}
          onChange={(e) => set({ target_path: e.currentTarget.value })}
        />
      </SimpleGrid>
      <Suspense fallback={<Text size="sm">Loading editor…</Text>}>
        <CodeEditor key={id ?? 'new'} label="Template source" value={current.source} onChange={(source) => set({ source })} />
      </Suspense>
      <SyntaxCheck source={current.source} />
      {t && (
        <Group gap="xs">
          <Text size="sm">Variables:</Text>
          {t.variables.length === 0 && (
            <Text size="sm" c="dimmed">
              none
            </Text>
          )}
          {t.variables.map((v) => (
            <Badge key={v.name} variant="outline" c="var(--mantine-color-text)">
              {v.name}: {v.type}
              {v.required ? '' : ' (optional)'}
            </Badge>
          ))}
        </Group>
      )}
      <Group justify="flex-end">
        <Button onClick={() => void save()}>{id ? 'Save new version' : 'Create template'}</Button>
      </Group>
      {id && <RenderPreview id={id} />}
      {versionList.length > 0 && (
        <Table fz="xs" aria-label="Versions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Th>Saved</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {versionList.map((v) => (
              <Table.Tr key={v.version}>
                <Table.Td>{v.version}</Table.Td>
                <Table.Td>{dateTime(v.created_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** Templates: list, create, edit in CodeMirror (Jinja), variables found by the API, versions, render preview. */
export default function Templates() {
  const client = useQueryClient();
  const templates = useQuery({ queryKey: ['templates'], queryFn: () => unwrap(api.GET('/api/config/templates')) });
  const [editing, setEditing] = useState<string | null | undefined>(undefined);
  const list = templates.data ?? [];
  const saved = () => {
    void client.invalidateQueries({ queryKey: ['templates'] });
    void client.invalidateQueries({ queryKey: ['template'] });
    void client.invalidateQueries({ queryKey: ['template-versions'] });
    setEditing(undefined);
  };
  return (
    <Page title="Templates" actions={<Button onClick={() => setEditing(null)}>New template</Button>}>
      <ErrorNote error={templates.error} />
      {templates.data && list.length === 0 && <Empty>No templates yet: create one with New template.</Empty>}
      {list.length > 0 && (
        <Table striped aria-label="Templates">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Platform</Table.Th>
              <Table.Th>Format</Table.Th>
              <Table.Th>Version</Table.Th>
              <Table.Th>Variables</Table.Th>
              <Table.Th>Edit</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.name}</Table.Td>
                <Table.Td>{t.platform}</Table.Td>
                <Table.Td>{t.config_format}</Table.Td>
                <Table.Td>{t.current_version}</Table.Td>
                <Table.Td>{t.variables.map((v) => v.name).join(', ')}</Table.Td>
                <Table.Td>
                  <Button size="xs" variant="subtle" onClick={() => setEditing(t.id)} aria-label={`Edit ${t.name}`}>
                    Edit
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={editing !== undefined} onClose={() => setEditing(undefined)} title={editing ? 'Edit template' : 'New template'} size="xl">
        {editing !== undefined && <Editor id={editing} onSaved={saved} />}
      </Modal>
    </Page>
  );
}

/** The source's syntax error with its line, checked by the API as the operator types (nothing saved). */
function SyntaxCheck({ source }: { source: string }) {
  const settled = useDebouncedValue(source, 400);
  const check = useQuery({
    queryKey: ['template-validate', settled],
    queryFn: () => unwrap(api.POST('/api/config/templates/validate', { body: { source: settled } })),
    enabled: settled.trim().length > 0,
  });
  const error = check.data?.error;
  if (!error) return null;
  const where = error.line ? `Line ${error.line}${error.column ? `, column ${error.column}` : ''}: ` : '';
  return (
    <Alert color="orange" role="status" title="Syntax error">
      {where}
      {error.message}
    </Alert>
  );
}
