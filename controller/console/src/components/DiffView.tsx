import { Box, Group, SegmentedControl, Switch, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { parseDiff, sideBySide, type DiffLine } from '../lib/diff-model';

const BG: Record<DiffLine['kind'], string | undefined> = {
  same: undefined,
  removed: 'var(--mantine-color-red-light)',
  added: 'var(--mantine-color-green-light)',
};
const MARK: Record<DiffLine['kind'], string> = { same: ' ', removed: '-', added: '+' };

function Cell({ line }: { line: DiffLine | null }) {
  return (
    <Table.Td style={{ background: line ? BG[line.kind] : undefined, whiteSpace: 'pre', fontFamily: 'monospace' }} data-kind={line?.kind}>
      {line ? `${MARK[line.kind]} ${line.text}` : ''}
    </Table.Td>
  );
}

/** The API's diff, unified or side by side, optionally only the changed lines. */
export function DiffView({ diff, additions, deletions }: { diff: string; additions: number; deletions: number }) {
  const [mode, setMode] = useState<'unified' | 'split'>('unified');
  const [changedOnly, setChangedOnly] = useState(true);
  const lines = parseDiff(diff).filter((l) => !changedOnly || l.kind !== 'same');
  return (
    <Box>
      <Group mb="xs">
        <Text size="sm" c="green" fw={600}>
          +{additions}
        </Text>
        <Text size="sm" c="red" fw={600}>
          -{deletions}
        </Text>
        <SegmentedControl
          size="xs"
          aria-label="Diff layout"
          value={mode}
          onChange={(v) => setMode(v as 'unified' | 'split')}
          data={[
            { label: 'Unified', value: 'unified' },
            { label: 'Side by side', value: 'split' },
          ]}
        />
        <Switch size="xs" label="Changed lines only" checked={changedOnly} onChange={(e) => setChangedOnly(e.currentTarget.checked)} />
      </Group>
      <Table.ScrollContainer minWidth={600}>
        <Table fz="xs" verticalSpacing={0} aria-label="Differences" data-testid="diff">
          <Table.Tbody>
            {mode === 'unified'
              ? lines.map((l, i) => (
                  <Table.Tr key={i}>
                    <Table.Td c="dimmed" w={50}>
                      {l.oldNo ?? ''}
                    </Table.Td>
                    <Table.Td c="dimmed" w={50}>
                      {l.newNo ?? ''}
                    </Table.Td>
                    <Cell line={l} />
                  </Table.Tr>
                ))
              : sideBySide(lines).map((r, i) => (
                  <Table.Tr key={i}>
                    <Table.Td c="dimmed" w={50}>
                      {r.left?.oldNo ?? ''}
                    </Table.Td>
                    <Cell line={r.left} />
                    <Table.Td c="dimmed" w={50}>
                      {r.right?.newNo ?? ''}
                    </Table.Td>
                    <Cell line={r.right} />
                  </Table.Tr>
                ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Box>
  );
}
