import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export function useSites() {
  return useQuery({ queryKey: ['sites'], queryFn: () => unwrap(api.GET('/api/sites')) });
}

/** Select options for a site field (value: id, label: name). */
export function siteOptions(data: { sites: { id: string; name: string }[] } | undefined) {
  return (data?.sites ?? []).map((s) => ({ value: s.id, label: s.name }));
}
