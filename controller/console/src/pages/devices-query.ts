/** The Devices page's filters and paging, as the URL query and as GET /api/devices parameters. */
export interface DeviceFilters {
  q: string;
  vendor: string;
  platform: string;
  site_id: string;
  source: string;
  page: number;
  size: number;
}

export const DEFAULT_FILTERS: DeviceFilters = { q: '', vendor: '', platform: '', site_id: '', source: '', page: 0, size: 50 };
const TEXT_KEYS = ['q', 'vendor', 'platform', 'site_id', 'source'] as const;

export function filtersFromSearch(search: string): DeviceFilters {
  const params = new URLSearchParams(search);
  const filters = { ...DEFAULT_FILTERS };
  for (const key of TEXT_KEYS) filters[key] = params.get(key) ?? '';
  const page = Number(params.get('page'));
  filters.page = Number.isInteger(page) && page > 0 ? page : 0;
  const size = Number(params.get('size'));
  filters.size = [25, 50, 100].includes(size) ? size : DEFAULT_FILTERS.size;
  return filters;
}

export function searchFromFilters(filters: DeviceFilters): string {
  const params = new URLSearchParams();
  for (const key of TEXT_KEYS) if (filters[key]) params.set(key, filters[key]);
  if (filters.page) params.set('page', String(filters.page));
  if (filters.size !== DEFAULT_FILTERS.size) params.set('size', String(filters.size));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Query parameters for the API: empty filters left out, the page as limit/offset. */
export function apiQuery(filters: DeviceFilters): Record<string, string | number> {
  const query: Record<string, string | number> = { limit: filters.size, offset: filters.page * filters.size };
  for (const key of TEXT_KEYS) if (filters[key].trim()) query[key] = filters[key].trim();
  return query;
}
