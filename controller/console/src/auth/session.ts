/**
 * The signed-in session: the access token lives only in memory, the refresh token in
 * sessionStorage (gone with the tab, never in localStorage), refreshed a minute before expiry.
 * Refresh tokens are single use, so concurrent refreshes share one request.
 */
import { SSO_STARTED_KEY, fragmentTokens, type TokenPair } from './fragment';

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

/** Marks this tab as leaving for the identity provider; call just before navigating to /api/auth/oidc/authorize. */
export function expectFragmentTokens(): void {
  sessionStorage.setItem(SSO_STARTED_KEY, String(Date.now()));
}

// The Back button from the provider's page may show this page again from the page cache, without
// loading the console: the sign-on was abandoned all the same.
addEventListener('pageshow', (event) => {
  if (event.persisted) sessionStorage.removeItem(SSO_STARTED_KEY);
});

/**
 * Reads tokens an OIDC sign-in left in the URL fragment, then removes them from the address bar.
 * Only a sign-in this tab started (expectFragmentTokens) is taken, and once (see fragmentTokens):
 * tokens from anywhere else sign nobody in and leave the tab's own session as it was.
 */
export function takeFragmentTokens(location: Location, history: History): boolean {
  const found = fragmentTokens(location.hash, sessionStorage.getItem(SSO_STARTED_KEY), Date.now());
  // The console loading again ends the sign-on this tab started, tokens or not: a tab back from the
  // provider without them abandoned it, and the tokens of a link opened later are not its own.
  sessionStorage.removeItem(SSO_STARTED_KEY);
  if (found === 'none') return false;
  history.replaceState(null, '', location.pathname + location.search);
  if (found === 'refused') return false;
  storeTokens(found);
  return true;
}
