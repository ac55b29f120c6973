/**
 * Headers on every console response. The console ships no inline script and loads nothing from
 * elsewhere; Mantine sets its theme variables in a <style> element, hence 'unsafe-inline' for styles
 * only. connect-src 'self' covers the API and the /api/live WebSocket on the same origin.
 */
export const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
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
