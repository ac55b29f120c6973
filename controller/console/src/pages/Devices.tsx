import { Button, Group, Modal, NativeSelect, Pagination, Table, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  createColumnHelper,
  flexRender,
  functionalUpdate,
  getCoreRowModel,
  useReactTable,
  type Row as TableRow,
  type RowSelectionState,
} from '@tanstack/react-table';
import { lazy, memo, useMemo, useState, type ChangeEventHandler } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { api } from '../api/client';
import type { paths } from '../api/schema';
import { confirmAction } from '../components/confirm';
import { Deferred } from '../components/Deferred';
import { Empty, ErrorNote, Page } from '../components/Page';
import { preloadRoute } from '../lib/pages';
import { devicesQuery } from '../lib/queries';
import { SortableTh } from '../components/SortableTh';
import { siteOptions, useSites } from '../lib/sites';
import { useDebouncedValue } from '../lib/use-debounced-value';
import { apiQuery, filtersFromSearch, orderFromSorting, searchFromFilters, sortingState, type DeviceFilters } from './devices-query';
import './devices-table.css';

/** A device as the list answers it (summary form). */
type Row = paths['/api/devices']['get']['responses'][200]['content']['application/json']['devices'][number];

const column = createColumnHelper<Row>();

// The dialogs' forms load when first opened: the list's first paint does not wait for their code.
const BulkEdit = lazy(() => import('./BulkEdit').then((m) => ({ default: m.BulkEdit })));
const DeviceForm = lazy(() => import('./DeviceForm').then((m) => ({ default: m.DeviceForm })));
const DeviceImport = lazy(() => import('./DeviceImport').then((m) => ({ default: m.DeviceImport })));

/** A plain checkbox: one per row, where Mantine's Checkbox (a dozen components each) cost most of the render. */
function Check(props: { label: string; checked: boolean; indeterminate?: boolean; onChange: ChangeEventHandler<HTMLInputElement> }) {
  return (
    <input
      type="checkbox"
      className="sb-device-check"
      aria-label={props.label}
      checked={props.checked}
      onChange={props.onChange}
      ref={(el) => {
        if (el) el.indeterminate = props.indeterminate ?? false;
      }}
    />
  );
}

/** One device row; drawn again only when its device or its selection changes. */
const DeviceRow = memo(function DeviceRow({ row }: { row: TableRow<Row>; selected: boolean }) {
  return (
    <tr className="sb-device-row">
      {row.getVisibleCells().map((c) => (
        <td key={c.id}>{flexRender(c.column.columnDef.cell, c.getContext())}</td>
      ))}
    </tr>
  );
});

const SOURCES = [{ value: '', label: 'Any' }, ...['manual', 'import', 'netbox'].map((s) => ({ value: s, label: s }))];

/** Devices: server-side paging, sorting and filters kept in the URL, row selection for bulk edit, import. */
export default function Devices() {
  const search = useSearch();
  const [, navigate] = useLocation();
  const client = useQueryClient();
  const filters = filtersFromSearch(search);
  const [q, setQ] = useState(filters.q);
  const settledQ = useDebouncedValue(q);
  const effective: DeviceFilters = { ...filters, q: settledQ };
  const setFilters = (next: Partial<DeviceFilters>) =>
    navigate(`/devices${searchFromFilters({ ...effective, page: 0, ...next })}`, { replace: true });
  const sites = useSites();
  const [dialog, setDialog] = useState<'create' | 'import' | 'bulk' | null>(null);
  const [selection, setSelection] = useState<RowSelectionState>({});

  const devices = useQuery({
    ...devicesQuery(apiQuery(effective)),
    placeholderData: keepPreviousData,
  });
  const rows: Row[] = devices.data?.devices ?? [];
  const total = devices.data?.total ?? 0;

  const columns = useMemo(
    () => [
      column.display({
        id: 'select',
        enableSorting: false,
        header: ({ table }) => (
          <Check
            label="Select all on this page"
            checked={table.getIsAllRowsSelected()}
            indeterminate={table.getIsSomeRowsSelected()}
            onChange={table.getToggleAllRowsSelectedHandler()}
          />
        ),
        cell: ({ row }) => <Check label={`Select ${row.original.name}`} checked={row.getIsSelected()} onChange={row.getToggleSelectedHandler()} />,
      }),
      column.accessor('name', {
        header: 'Name',
        cell: (c) => (
          <Link href={`/devices/${c.row.original.id}`} onMouseEnter={() => preloadRoute(client, `/devices/${c.row.original.id}`)}>
            {c.getValue()}
          </Link>
        ),
      }),
      column.accessor('host', { header: 'Host' }),
      column.accessor('device_type', { header: 'Type' }),
      column.accessor('manufacturer', { header: 'Vendor' }),
      column.accessor('model', { header: 'Model' }),
      column.accessor('site', { header: 'Site' }),
      column.accessor('source', { header: 'Source' }),
    ],
    [client],
  );
  const table = useReactTable({
    data: rows,
    columns,
    getRowId: (r) => r.id,
    state: { rowSelection: selection, sorting: sortingState(effective) },
    onRowSelectionChange: setSelection,
    // The server sorts (GET /api/devices sort/order); a header click changes the URL, page 1.
    onSortingChange: (update) => setFilters(orderFromSorting(functionalUpdate(update, sortingState(effective)))),
    manualSorting: true,
    sortDescFirst: false,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
  });
  const selectedIds = Object.keys(selection).filter((id) => selection[id]);

  const refresh = () => void client.invalidateQueries({ queryKey: ['devices'] });
  const remove = async () => {
    if (!(await confirmAction('Delete devices', `Delete ${selectedIds.length} selected device(s) and their stored backups?`, 'Delete'))) return;
    for (const id of selectedIds) {
      const { error } = await api.DELETE('/api/devices/{id}', { params: { path: { id } } });
      if (error) notifications.show({ color: 'red', title: 'Delete failed', message: (error as { error: string }).error });
    }
    setSelection({});
    refresh();
  };

  const pages = Math.max(1, Math.ceil(total / effective.size));
  return (
    <Page
      title="Devices"
      actions={
        <>
          <Button onClick={() => setDialog('create')}>New device</Button>
          <Button variant="default" onClick={() => setDialog('import')}>
            Import
          </Button>
        </>
      }
    >
      <Group align="end" wrap="wrap">
        <TextInput label="Search" placeholder="Name, host, model…" value={q} onChange={(e) => setQ(e.currentTarget.value)} />
        <TextInput
          label="Vendor"
          defaultValue={filters.vendor}
          onBlur={(e) => setFilters({ vendor: e.currentTarget.value })}
          onKeyDown={(e) => e.key === 'Enter' && setFilters({ vendor: e.currentTarget.value })}
          w={140}
        />
        <TextInput
          label="Platform"
          defaultValue={filters.platform}
          onBlur={(e) => setFilters({ platform: e.currentTarget.value })}
          onKeyDown={(e) => e.key === 'Enter' && setFilters({ platform: e.currentTarget.value })}
          w={140}
        />
        {/* Native selects: Mantine's Select measures its dropdown's position on every render (a forced layout). */}
        <NativeSelect
          label="Site"
          data={[{ value: '', label: 'Any' }, ...siteOptions(sites.data)]}
          value={filters.site_id}
          onChange={(e) => setFilters({ site_id: e.currentTarget.value })}
          w={180}
        />
        <NativeSelect label="Source" data={SOURCES} value={filters.source} onChange={(e) => setFilters({ source: e.currentTarget.value })} w={130} />
      </Group>
      {selectedIds.length > 0 && (
        <Group>
          <Text size="sm">{selectedIds.length} selected</Text>
          <Button size="xs" variant="light" onClick={() => setDialog('bulk')}>
            Edit selected
          </Button>
          <Button size="xs" color="red" variant="light" c="red" onClick={() => void remove()}>
            Delete selected
          </Button>
        </Group>
      )}
      <ErrorNote error={devices.error} />
      {devices.data && total === 0 && <Empty>No devices match. Add one with New device, or import a CSV file.</Empty>}
      {total > 0 && (
        <div className="sb-table-scroll">
          <Table aria-label="Devices" aria-rowcount={total}>
            <Table.Thead>
              {table.getHeaderGroups().map((g) => (
                <Table.Tr key={g.id}>
                  {g.headers.map((h) => (
                    <SortableTh key={h.id} header={h} />
                  ))}
                </Table.Tr>
              ))}
            </Table.Thead>
            <Table.Tbody>
              {table.getRowModel().rows.map((r) => (
                <DeviceRow key={r.id} row={r} selected={r.getIsSelected()} />
              ))}
            </Table.Tbody>
          </Table>
        </div>
      )}
      {total > 0 && (
        <Group justify="space-between">
          <Text size="sm">
            {effective.page * effective.size + 1}–{Math.min(total, (effective.page + 1) * effective.size)} of {total}
          </Text>
          <Group>
            <NativeSelect
              aria-label="Rows per page"
              data={['25', '50', '100']}
              value={String(effective.size)}
              onChange={(e) => setFilters({ size: Number(e.currentTarget.value) })}
              w={90}
            />
            <Pagination
              total={pages}
              value={effective.page + 1}
              onChange={(p) => setFilters({ page: p - 1 })}
              getItemProps={(p) => ({ 'aria-label': `Page ${p}` })}
              getControlProps={(c) => ({ 'aria-label': `${c} page` })}
            />
          </Group>
        </Group>
      )}
      <Modal opened={dialog === 'create'} onClose={() => setDialog(null)} title="New device" size="lg">
        <Deferred>
          <DeviceForm
            onDone={() => {
              setDialog(null);
              refresh();
            }}
          />
        </Deferred>
      </Modal>
      <Modal opened={dialog === 'import'} onClose={() => setDialog(null)} title="Import devices" size="lg">
        <Deferred>
          <DeviceImport onImported={refresh} />
        </Deferred>
      </Modal>
      <Modal opened={dialog === 'bulk'} onClose={() => setDialog(null)} title={`Edit ${selectedIds.length} devices`}>
        <Deferred>
          <BulkEdit
            ids={selectedIds}
            onDone={() => {
              setDialog(null);
              setSelection({});
              refresh();
            }}
          />
        </Deferred>
      </Modal>
    </Page>
  );
}
