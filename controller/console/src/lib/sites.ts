import { useQuery } from '@tanstack/react-query';
import { sitesQuery } from './queries';

export function useSites() {
  return useQuery(sitesQuery);
}

/** Select options for records chosen by name (value: id, label: name). */
export const nameOptions = (list: { id: string; name: string }[] | undefined) => (list ?? []).map((r) => ({ value: r.id, label: r.name }));

/** Select options for a site field (value: id, label: name). */
export function siteOptions(data: { sites: { id: string; name: string }[] } | undefined) {
  return nameOptions(data?.sites);
}
