import { QueryClient } from '@tanstack/query-core';

/**
 * The console's one QueryClient, from query-core (no React), so that boot.ts can fill it with the
 * first page's data before the React bundle has arrived.
 */
export const queryClient = new QueryClient({
  defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: false } },
});
