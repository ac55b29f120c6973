import { Table, UnstyledButton } from '@mantine/core';
import { flexRender, type Header } from '@tanstack/react-table';

const ARIA = { asc: 'ascending', desc: 'descending' } as const;
const ARROW = { asc: ' ▲', desc: ' ▼' } as const;

/**
 * A table header cell; a sortable column's header is a button that cycles its order
 * (ascending, descending, none) and says the current one through aria-sort.
 */
export function SortableTh<Row>({ header }: { header: Header<Row, unknown> }) {
  const label = flexRender(header.column.columnDef.header, header.getContext());
  if (!header.column.getCanSort()) return <Table.Th scope="col">{label}</Table.Th>;
  const sorted = header.column.getIsSorted();
  return (
    <Table.Th scope="col" aria-sort={sorted ? ARIA[sorted] : 'none'}>
      <UnstyledButton fw={700} fz="sm" onClick={header.column.getToggleSortingHandler()}>
        {label}
        <span aria-hidden="true">{sorted ? ARROW[sorted] : ''}</span>
      </UnstyledButton>
    </Table.Th>
  );
}
