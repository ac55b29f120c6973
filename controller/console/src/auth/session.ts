/**
 * The signed-in session: the access token lives only in memory, the refresh token in
 * sessionStorage (gone with the tab, never in localStorage), refreshed a minute before expiry.
 * Refresh tokens are single use, so concurrent refreshes share one request.
 */
export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

const REFRESH_KEY = 'switchboard.refresh';
/** Refresh this long before the access token expires. */
const EARLY_MS = 60_000;

type Listener = (signedIn: boolean) => void;

let accessToken: string | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;
let refreshing: Promise<boolean> | null = null;
const listeners = new Set<Listener>();

export function currentToken(): string | null {
  return accessToken;
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(): void {
  for (const listener of listeners) listener(accessToken !== null);
}

export function storeTokens(pair: TokenPair): void {
  accessToken = pair.access_token;
  sessionStorage.setItem(REFRESH_KEY, pair.refresh_token);
  if (timer) clearTimeout(timer);
  const delay = Math.max(5_000, pair.expires_in * 1000 - EARLY_MS);
  // setTimeout overflows past ~24.8 days; access tokens last hours.
  timer = setTimeout(() => void refresh(), Math.min(delay, 2 ** 31 - 1));
  notify();
}

/** Swaps the access token only (switch-org keeps the refresh token). */
export function replaceAccessToken(token: string): void {
  accessToken = token;
  notify();
}

export function clearSession(): void {
  accessToken = null;
  sessionStorage.removeItem(REFRESH_KEY);
  if (timer) clearTimeout(timer);
  timer = null;
  notify();
}

export function hasRefreshToken(): boolean {
  return sessionStorage.getItem(REFRESH_KEY) !== null;
}

/** Trades the stored refresh token for a new pair; false (and signed out) when refused. */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const token = sessionStorage.getItem(REFRESH_KEY);
    if (!token) return false;
    try {
      const res = await fetch('/api/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: token }),
      });
      if (!res.ok) {
        clearSession();
        return false;
      }
      storeTokens((await res.json()) as TokenPair);
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

/** Reads tokens an OIDC sign-in left in the URL fragment, then removes them from the address bar. */
export function takeFragmentTokens(location: Location, history: History): boolean {
  const params = new URLSearchParams(location.hash.slice(1));
  const access = params.get('access_token');
  const refreshToken = params.get('refresh_token');
  if (!access || !refreshToken) return false;
  history.replaceState(null, '', location.pathname + location.search);
  storeTokens({ access_token: access, refresh_token: refreshToken, expires_in: Number(params.get('expires_in') ?? 3600) });
  return true;
}
