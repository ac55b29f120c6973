import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

/** The signed-in user (GET /api/auth/me): permissions, organization, provider. */
export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: () => unwrap(api.GET('/api/auth/me')), staleTime: 60_000 });
}

export function useCan(permission: string): boolean {
  return useMe().data?.permissions.includes(permission) ?? false;
}
