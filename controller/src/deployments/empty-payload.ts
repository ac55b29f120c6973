/**
 * Whether a rendered payload carries nothing. A replace with such a payload would wipe its
 * target on the device (the README's `{"interface": []}` on /interfaces), so deployments refuse
 * it unless the request sends allow_empty_replace.
 */

/** A JSON value with no leaf: null, [], {}, or containers holding only such values. */
function jsonHasLeaf(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some(jsonHasLeaf);
  if (typeof value === 'object') return Object.values(value as Record<string, unknown>).some(jsonHasLeaf);
  return true;
}

/** XML with no text content: only tags (and their attributes), comments and whitespace. */
function xmlHasText(text: string): boolean {
  const stripped = text
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<\?[\s\S]*?\?>/g, '')
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/<[^>]*>/g, '');
  return stripped.trim() !== '';
}

/** CLI with no command: blank lines and comment lines ('!' or '#') only. */
function cliHasCommand(text: string): boolean {
  return text.split('\n').some((line) => {
    const t = line.trim();
    return t !== '' && !t.startsWith('!') && !t.startsWith('#');
  });
}

export function isEmptyPayload(text: string, format: 'json' | 'xml' | 'cli'): boolean {
  if (text.trim() === '') return true;
  if (format === 'json') {
    try {
      return !jsonHasLeaf(JSON.parse(text));
    } catch {
      // Not JSON: the payload check reports it.
      return false;
    }
  }
  return format === 'xml' ? !xmlHasText(text) : !cliHasCommand(text);
}
