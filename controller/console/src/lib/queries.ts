import type { QueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { apiQuery, filtersFromSearch } from '../pages/devices-query';

/**
 * The queries the busiest pages start with, in one place, so that a page and its preloader
 * (a hovered link, the first load) share keys and fetchers: a page whose data was asked for
 * ahead of it renders from the cache.
 */
export const healthQuery = {
  queryKey: ['sites-health'],
  queryFn: ({ signal }: { signal?: AbortSignal }) => unwrap(api.GET('/api/sites/health', { signal })),
};

/** Sites change rarely: one fetch serves every page's site picker for a minute. */
export const sitesQuery = {
  queryKey: ['sites'],
  queryFn: () => unwrap(api.GET('/api/sites')),
  staleTime: 60_000,
};

export function devicesQuery(query: Record<string, string | number>) {
  return {
    queryKey: ['devices', query],
    queryFn: () => unwrap(api.GET('/api/devices', { params: { query } })),
  };
}

export function deviceQuery(id: string) {
  return { queryKey: ['device', id], queryFn: () => unwrap(api.GET('/api/devices/{id}', { params: { path: { id } } })) };
}

export function configsQuery(deviceId: string) {
  return {
    queryKey: ['configs', deviceId],
    queryFn: () => unwrap(api.GET('/api/config/devices/{device_id}/configs', { params: { path: { device_id: deviceId }, query: { limit: 100 } } })),
  };
}

export const profilesQuery = { queryKey: ['profiles'], queryFn: () => unwrap(api.GET('/api/profiles')), staleTime: 60_000 };

const DEVICE_PATH = /^\/devices\/([0-9a-f-]{36})$/;

/**
 * Starts a route's data before the page asks (on hover, focus, or the first load, see preloadRoute
 * and boot.ts). A query already fresh or in flight is not asked again.
 */
export function preloadData(client: QueryClient, path: string, search = ''): void {
  const [pathname] = path.split('?');
  if (pathname === '/') {
    void client.prefetchQuery(healthQuery);
  } else if (pathname === '/devices') {
    void client.prefetchQuery(devicesQuery(apiQuery(filtersFromSearch(search))));
    void client.prefetchQuery(sitesQuery);
  } else if (DEVICE_PATH.test(pathname)) {
    const id = DEVICE_PATH.exec(pathname)![1];
    void client.prefetchQuery(deviceQuery(id));
    void client.prefetchQuery(configsQuery(id));
    void client.prefetchQuery(profilesQuery);
  }
}
