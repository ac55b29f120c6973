import { timingSafeEqual } from 'node:crypto';
import { appError } from '../errors/app-error';

/**
 * Binds an OIDC sign-in to the browser that started it (login CSRF): /oidc/authorize sets this
 * cookie to the state it sends to the provider, and the callback is accepted only from a browser
 * that sends the same value back. Someone who starts a flow and lures a victim to its callback
 * URL lacks the victim's cookie, so the victim is not signed in to the attacker's account.
 */
export const OIDC_STATE_COOKIE = 'switchboard_oidc_state';
/** Sent only to the OIDC routes, not with every API call. */
const COOKIE_PATH = '/api/auth/oidc';

/**
 * The Set-Cookie value: HttpOnly (no script reads it), SameSite=Lax (still sent on the
 * provider's top-level redirect back), Secure when the service is reached over https.
 */
export function stateCookie(state: string, maxAgeSeconds: number, publicUrl: string): string {
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${OIDC_STATE_COOKIE}=${state}; Max-Age=${maxAgeSeconds}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax${secure}`;
}

/** Removes the cookie once the callback has used it. */
export function clearedStateCookie(publicUrl: string): string {
  return stateCookie('', 0, publicUrl);
}

/** The cookie's value from a Cookie request header, if present. */
export function readStateCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === OIDC_STATE_COOKIE) return value.join('=');
  }
  return undefined;
}

/** 400 unless the browser's cookie carries the callback's state. */
export function assertSameBrowser(state: string, cookie: string | undefined): void {
  const sent = Buffer.from(cookie ?? '');
  const expected = Buffer.from(state);
  if (sent.length === expected.length && timingSafeEqual(sent, expected)) return;
  throw appError(
    'OIDC_STATE_NOT_BOUND',
    cookie
      ? 'This sign-in was started in another browser or tab (the state cookie does not match); start the sign-in again from this browser'
      : 'This browser did not start this sign-in (no state cookie; cookies may be blocked for this site); start the sign-in again from this browser',
  );
}
