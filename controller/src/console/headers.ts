import { DEFAULT_CSP } from '../plugins/security-headers';

/**
 * The console's own Content-Security-Policy: the default (plugins/security-headers.ts, which also
 * sets nosniff, no-referrer, framing and opener headers on every response) loosened only where the
 * console needs it. Mantine sets its theme variables in a <style> element, hence 'unsafe-inline'
 * for styles only; fonts come from the build.
 */
export const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': `${DEFAULT_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")}; font-src 'self'`,
};

/**
 * Paths that belong to the API side and never fall back to the console's index.html, under any
 * spelling the router might not match (percent-encoded letters, upper case, doubled slashes, a ';'
 * suffix): those answer 404 like any unknown API path, never the console. An undecodable path is
 * not a console route either.
 */
export function isServerPath(rawPath: string): boolean {
  let path = rawPath.split(/[?;]/)[0];
  try {
    path = decodeURIComponent(path);
  } catch {
    return true;
  }
  return /^\/(api|healthz|readyz|metrics)(\/|$)/.test(path.replace(/\/{2,}/g, '/').toLowerCase());
}
