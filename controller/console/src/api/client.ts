import createClient, { type Middleware } from 'openapi-fetch';
import { clearSession, currentToken, refresh } from '../auth/session';
import type { paths } from './schema';

/** Attaches the access token; on a 401 refreshes once and retries, else signs out. */
const auth: Middleware = {
  onRequest({ request }) {
    const token = currentToken();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status !== 401 || request.url.includes('/api/auth/')) return response;
    if (await refresh()) {
      const retry = new Request(request);
      retry.headers.set('authorization', `Bearer ${currentToken()}`);
      return fetch(retry);
    }
    clearSession();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(auth);

/** The message an API error carries: JSON {error} or, for snapshot routes, plain text. */
export function errorMessage(error: unknown, fallback = 'The request failed'): string {
  if (!error) return fallback;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && 'error' in error && typeof (error as { error: unknown }).error === 'string') {
    return (error as { error: string }).error;
  }
  if (error instanceof Error) return error.message;
  return fallback;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** Unwraps an openapi-fetch result: the data, or an ApiError with the API's own message. */
export async function unwrap<T>(promise: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await promise;
  if (error !== undefined || !response.ok)
    throw new ApiError(errorMessage(error, `${response.status} ${response.statusText}`), response.status, error);
  return data as T;
}
