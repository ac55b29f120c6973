import type { UseQueryResult } from '@tanstack/react-query';
import { Empty, ErrorNote } from './Page';
import { RecordsTable } from './RecordsTable';

/** A list answer as a table: the first array in the body, or the body when it is one. */
export function ListQuery({ query, label, empty, hide }: { query: UseQueryResult<unknown>; label: string; empty: string; hide?: string[] }) {
  if (query.error) return <ErrorNote error={query.error} />;
  if (!query.data) return null;
  const data = query.data as unknown;
  const rows = (Array.isArray(data) ? data : (Object.values(data as object).find(Array.isArray) ?? [])) as Record<string, unknown>[];
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  return <RecordsTable records={rows} label={label} empty={empty} hide={hide} />;
}
