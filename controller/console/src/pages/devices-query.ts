/** Columns GET /api/devices can sort by (its `sort` enum). */
export const SORTABLE = ['name', 'host', 'device_type', 'manufacturer', 'model', 'site', 'source'] as const;
export type DeviceSort = (typeof SORTABLE)[number];

/** The Devices page's filters, order and paging, as the URL query and as GET /api/devices parameters. */
export interface DeviceFilters {
  q: string;
  vendor: string;
  platform: string;
  site_id: string;
  source: string;
  /** '' is the API's default order (by name). */
  sort: DeviceSort | '';
  desc: boolean;
  page: number;
  size: number;
}

export const DEFAULT_FILTERS: DeviceFilters = { q: '', vendor: '', platform: '', site_id: '', source: '', sort: '', desc: false, page: 0, size: 50 };
const TEXT_KEYS = ['q', 'vendor', 'platform', 'site_id', 'source'] as const;

export function filtersFromSearch(search: string): DeviceFilters {
  const params = new URLSearchParams(search);
  const filters = { ...DEFAULT_FILTERS };
  for (const key of TEXT_KEYS) filters[key] = params.get(key) ?? '';
  const page = Number(params.get('page'));
  filters.page = Number.isInteger(page) && page > 0 ? page : 0;
  const size = Number(params.get('size'));
  filters.size = [25, 50, 100].includes(size) ? size : DEFAULT_FILTERS.size;
  const sort = params.get('sort') as DeviceSort;
  filters.sort = SORTABLE.includes(sort) ? sort : '';
  filters.desc = params.get('order') === 'desc';
  return filters;
}

export function searchFromFilters(filters: DeviceFilters): string {
  const params = new URLSearchParams();
  for (const key of TEXT_KEYS) if (filters[key]) params.set(key, filters[key]);
  if (filters.page) params.set('page', String(filters.page));
  if (filters.size !== DEFAULT_FILTERS.size) params.set('size', String(filters.size));
  if (filters.sort) params.set('sort', filters.sort);
  if (filters.desc) params.set('order', 'desc');
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Query parameters for the API: empty filters left out, the page as limit/offset, the order when chosen. */
export function apiQuery(filters: DeviceFilters): Record<string, string | number> {
  const query: Record<string, string | number> = { limit: filters.size, offset: filters.page * filters.size };
  for (const key of TEXT_KEYS) if (filters[key].trim()) query[key] = filters[key].trim();
  if (filters.sort) query.sort = filters.sort;
  if (filters.desc) query.order = 'desc';
  return query;
}

/** The order as TanStack Table sorting state, and back (a click cycles asc → desc → the default). */
export function sortingState(filters: DeviceFilters): { id: string; desc: boolean }[] {
  return filters.sort ? [{ id: filters.sort, desc: filters.desc }] : [];
}

export function orderFromSorting(sorting: { id: string; desc: boolean }[]): Pick<DeviceFilters, 'sort' | 'desc'> {
  const first = sorting[0];
  return first && SORTABLE.includes(first.id as DeviceSort) ? { sort: first.id as DeviceSort, desc: first.desc } : { sort: '', desc: false };
}
