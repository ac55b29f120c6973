import { useQuery } from '@tanstack/react-query';
import { sitesQuery } from './queries';

export function useSites() {
  return useQuery(sitesQuery);
}

/** Select options for a site field (value: id, label: name). */
export function siteOptions(data: { sites: { id: string; name: string }[] } | undefined) {
  return (data?.sites ?? []).map((s) => ({ value: s.id, label: s.name }));
}
