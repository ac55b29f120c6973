import { Table, Text } from '@mantine/core';

type Cell = unknown;

function show(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(show).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A read-only table of records, columns from their keys (discovery data, poll history). */
export function RecordsTable({
  records,
  label,
  empty,
  hide = [],
}: {
  records: Record<string, Cell>[];
  label: string;
  empty: string;
  hide?: string[];
}) {
  if (records.length === 0)
    return (
      <Text size="sm" c="dimmed">
        {empty}
      </Text>
    );
  const skip = new Set(['id', 'device_id', 'org_id', 'poll_id', ...hide]);
  const keys = Object.keys(records[0]).filter((k) => !skip.has(k));
  return (
    <Table.ScrollContainer minWidth={600}>
      <Table fz="xs" striped aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            {keys.map((k) => (
              <Table.Th key={k}>{k.replaceAll('_', ' ')}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {records.map((r, i) => (
            <Table.Tr key={i}>
              {keys.map((k) => (
                <Table.Td key={k}>{show(r[k])}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
