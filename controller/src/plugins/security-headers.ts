import type { FastifyInstance } from 'fastify';

/**
 * Strict enough for JSON, and enough for a same-origin web page with its own script and style
 * files (no inline code, no framing, no third-party origins). The API explorer loosens it for its
 * own routes (plugins/openapi.ts); a route may set its own before sending.
 */
export const DEFAULT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const DEFAULTS: [string, string][] = [
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'no-referrer'],
  ['content-security-policy', DEFAULT_CSP],
  ['cross-origin-opener-policy', 'same-origin'],
];

/**
 * Security headers on every response, errors and 404s included. Set late (onSend, root scope)
 * and only where the response has none yet, so a route's own value wins.
 */
export async function securityHeadersPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', (_request, reply, payload, done) => {
    for (const [name, value] of DEFAULTS) if (!reply.hasHeader(name)) reply.header(name, value);
    done(null, payload);
  });
}
