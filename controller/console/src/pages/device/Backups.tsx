import { Alert, Button, Checkbox, Group, Modal, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { ConfigText } from '../../components/ConfigText';
import { DiffView } from '../../components/DiffView';
import { ErrorNote } from '../../components/Page';
import { StatusBadge } from '../../components/StatusBadge';
import { backupEnded, backupProgressText, type BackupProgress } from '../../lib/backup-progress';
import { bytes, dateTime } from '../../lib/format';
import { configsQuery } from '../../lib/queries';
import { useLive } from '../../live/use-live';

function VersionText({ deviceId, version }: { deviceId: string; version: number }) {
  const config = useQuery({
    queryKey: ['config', deviceId, version],
    queryFn: () => unwrap(api.GET('/api/config/devices/{device_id}/configs/{version}', { params: { path: { device_id: deviceId, version } } })),
  });
  if (config.error) return <ErrorNote error={config.error} />;
  if (!config.data) return <Text size="sm">Loading…</Text>;
  if (config.data.status !== 'success')
    return (
      <Alert color="red" title="This backup failed">
        {config.data.error_message}
      </Alert>
    );
  return <ConfigText text={config.data.config_text} />;
}

function VersionDiff({ deviceId, pair }: { deviceId: string; pair: [number, number] }) {
  const [oldVersion, newVersion] = [Math.min(...pair), Math.max(...pair)];
  const diff = useQuery({
    queryKey: ['diff', deviceId, oldVersion, newVersion],
    queryFn: () =>
      unwrap(
        api.GET('/api/config/devices/{device_id}/diff-versions', {
          params: { path: { device_id: deviceId }, query: { old_version: oldVersion, new_version: newVersion } },
        }),
      ),
  });
  if (diff.error) return <ErrorNote error={diff.error} />;
  if (!diff.data) return <Text size="sm">Loading…</Text>;
  if (diff.data.identical)
    return (
      <Text size="sm">
        Versions {oldVersion} and {newVersion} are identical.
      </Text>
    );
  return <DiffView diff={diff.data.diff} additions={diff.data.additions} deletions={diff.data.deletions} />;
}

/** Whether a version differs from the previous successful one of the same method. */
function changedLabel(list: { status: string; method: string; config_hash: string }[], i: number): string {
  const c = list[i];
  if (c.status !== 'success') return '—';
  const previous = list.slice(i + 1).find((p) => p.status === 'success' && p.method === c.method);
  if (!previous) return 'first';
  return previous.config_hash === c.config_hash ? 'no' : 'yes';
}

/** Stored versions newest first; view one, diff two, back up now. */
export function Backups({ deviceId }: { deviceId: string }) {
  const client = useQueryClient();
  const versions = useQuery(configsQuery(deviceId));
  const [picked, setPicked] = useState<number[]>([]);
  const [viewing, setViewing] = useState<number | null>(null);
  const [diffing, setDiffing] = useState<[number, number] | null>(null);
  const pull = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/config/devices/{device_id}/pull', { params: { path: { device_id: deviceId }, query: { method: 'cli' } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: ['configs', deviceId] }),
  });
  // Progress of any backup of this device (Back up now, bulk, scheduled, snapshot), live.
  const [progress, setProgress] = useState<BackupProgress | null>(null);
  useLive(['backup'], (message) => {
    if (message.device_id !== deviceId) return;
    const next = { status: message.status, error: message.error ?? null } as BackupProgress;
    setProgress(next);
    if (backupEnded(next)) void client.invalidateQueries({ queryKey: ['configs', deviceId] });
  });
  const toggle = (v: number) => setPicked((p) => (p.includes(v) ? p.filter((x) => x !== v) : [...p.slice(-1), v]));
  const list = versions.data?.configs ?? [];

  return (
    <Stack>
      <Group>
        <Button onClick={() => pull.mutate()} loading={pull.isPending}>
          Back up now
        </Button>
        <Button variant="default" disabled={picked.length !== 2} onClick={() => setDiffing([picked[0], picked[1]])}>
          Compare selected
        </Button>
        {progress ? (
          <Text
            size="sm"
            role="status"
            data-testid="backup-progress"
            data-status={progress.status}
            c={progress.status === 'failed' ? 'red' : undefined}
          >
            {backupProgressText(progress)}
          </Text>
        ) : (
          pull.isPending && (
            <Text size="sm" role="status">
              Backing up: connecting to the device through its agent…
            </Text>
          )
        )}
      </Group>
      <ErrorNote error={pull.error} action="The failed attempt is stored as a version below with its reason." />
      {pull.data && !pull.isPending && !progress && (
        <Text size="sm" role="status">
          {pull.data.message}
        </Text>
      )}
      <ErrorNote error={versions.error} />
      {versions.data && list.length === 0 && (
        <Text size="sm" c="dimmed">
          No backups yet: use Back up now.
        </Text>
      )}
      {list.length > 0 && (
        <Table.ScrollContainer minWidth={700}>
          <Table aria-label="Backups" striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Compare</Table.Th>
                <Table.Th>Version</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Taken</Table.Th>
                <Table.Th>Via</Table.Th>
                <Table.Th>Size</Table.Th>
                <Table.Th>Changed</Table.Th>
                <Table.Th>View</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((c, i) => (
                <Table.Tr key={c.id} data-version={c.version}>
                  <Table.Td>
                    <Checkbox
                      aria-label={`Compare version ${c.version}`}
                      checked={picked.includes(c.version)}
                      onChange={() => toggle(c.version)}
                      disabled={c.status !== 'success'}
                    />
                  </Table.Td>
                  <Table.Td>{c.version}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={c.status} />
                    {c.error_message && (
                      <Text size="xs" c="red">
                        {c.error_message}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{dateTime(c.created_at)}</Table.Td>
                  <Table.Td>{c.pulled_via}</Table.Td>
                  <Table.Td>{bytes(c.size_bytes)}</Table.Td>
                  <Table.Td>{changedLabel(list, i)}</Table.Td>
                  <Table.Td>
                    <Button size="xs" variant="subtle" onClick={() => setViewing(c.version)} aria-label={`View version ${c.version}`}>
                      View
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal opened={viewing !== null} onClose={() => setViewing(null)} title={`Version ${viewing}`} size="xl">
        {viewing !== null && <VersionText deviceId={deviceId} version={viewing} />}
      </Modal>
      <Modal
        opened={diffing !== null}
        onClose={() => setDiffing(null)}
        title={diffing ? `Version ${Math.min(...diffing)} → ${Math.max(...diffing)}` : ''}
        size="100%"
      >
        {diffing && <VersionDiff deviceId={deviceId} pair={diffing} />}
      </Modal>
    </Stack>
  );
}
