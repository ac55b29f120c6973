/**
 * How a value written by {{ }} enters a template's output, by the template's config_format. A
 * value (a device description synced from NetBox, a variable) must stay a value: its characters
 * may not become the edit's own structure, where they could add an `operation="delete"` to a
 * NETCONF edit, a key to a JSON payload or a command to a CLI session.
 *
 * - xml: escaped as XML character data (`&`, `<`, `>`, quotes);
 * - json: escaped as the inside of a JSON string (quotes, backslashes, control characters), so
 *   `"description": "{{ d }}"` holds whatever `d` holds; a JSON value is written with `| dump`;
 * - cli: written as is, but a line break is refused (the agent would type a command of its own).
 *
 * What the template marks as its own text passes as written: `| safe`, `| escape` and a macro's
 * output (nunjucks' SafeString).
 */
import { nunjucks } from './syntax';

/** A template's config_format, which decides how its values are written. */
export type RenderFormat = 'cli' | 'xml' | 'json';

const { SafeString } = nunjucks.runtime;

/** `| dump`'s JSON text: a JSON template writes it as is; other formats treat it as any value. */
export class JsonText extends SafeString {}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (text: string) => text.replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]);
const escapeJsonString = (text: string) => JSON.stringify(text).slice(1, -1);

const lineBreakInValue = () =>
  'a value written by {{ }} holds a line break, which a CLI template would type as a separate command; ' +
  'write the lines in the template (a loop), or mark a value meant to span lines with | safe';

/** The text a {{ }} value adds to a render of `format` (undefined: written as is). */
export function writeValue(value: unknown, format: RenderFormat | undefined): string {
  if (value === undefined || value === null) return '';
  if (value instanceof JsonText && format === 'json') return String(value);
  if (value instanceof SafeString && !(value instanceof JsonText)) return String(value);
  const text = String(value);
  switch (format) {
    case 'xml':
      return escapeXml(text);
    case 'json':
      return escapeJsonString(text);
    case 'cli':
      if (/[\r\n]/.test(text)) throw new Error(lineBreakInValue());
      return text;
    default:
      return text;
  }
}
