import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether an Authorization header carries exactly `Bearer <token>`. Compares digests in
 * constant time, so neither the token nor its length leaks through timing.
 */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  if (!match) return false;
  return timingSafeEqual(digest(match[1]), digest(token));
}
