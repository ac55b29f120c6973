/** Replaces credentials inside URLs (user:password@ or token@) so a URL can be shown in a message or log. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@,]*@/gi, '$1[redacted]@');
}
