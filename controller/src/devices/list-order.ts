/**
 * The orders GET /api/devices offers beyond API.md's name order: one per column of the console's
 * device table. Each sort key is an expression an index of the devices table leads with, after
 * org_id, so a page is read in index order (backwards for desc) instead of sorting the
 * organization's devices: (org_id, name) unique, (org_id, lower(manufacturer)),
 * (org_id, device_type), (org_id, source), (org_id, lower(site)) from migrations 002 and 020;
 * (org_id, host) and (org_id, model) from migration 181. Vendor and site compare case-insensitively,
 * as their filters do. Every sortable column is NOT NULL (blank is ''), so there are no NULLs to
 * place; blank values sort before any text ascending, after it descending.
 */
// Columns of the summary form only: the page's outer json_agg orders by them again.
export const DEVICE_SORTS = ['name', 'host', 'device_type', 'manufacturer', 'model', 'site', 'source'] as const;
export type DeviceSort = (typeof DEVICE_SORTS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** Sorted by lower(column), matching the filter's case-insensitive comparison and its index. */
const CASE_INSENSITIVE: ReadonlySet<DeviceSort> = new Set(['manufacturer', 'site']);

/** A requested order; both parts optional (absent sort: by name, API.md's order). */
export interface ListOrder {
  sort?: DeviceSort;
  order?: SortOrder;
}

/**
 * The ORDER BY list for `order`, its columns qualified with `prefix` (e.g. 'p.'). Ties break on
 * id in the same direction, so pages never overlap or skip a row and one index scan serves both.
 * Without sort or order it is API.md's plain name order, unchanged.
 */
export function orderBySql(order: ListOrder, prefix = ''): string {
  if (order.sort === undefined && order.order === undefined) return `${prefix}name`;
  const direction = order.order === 'desc' ? 'DESC' : 'ASC';
  const sort = order.sort ?? 'name';
  const key = CASE_INSENSITIVE.has(sort) ? `lower(${prefix}${sort})` : `${prefix}${sort}`;
  return `${key} ${direction}, ${prefix}id ${direction}`;
}
