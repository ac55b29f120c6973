/**
 * What a value written by {{ }} may hold, by the template's config_format. A value (a device
 * description synced from NetBox, a variable) must stay a value: its characters may not become the
 * edit's own structure, where they could add an `nc:operation="delete"` to a NETCONF edit, a key
 * to a JSON payload or a command to a CLI session. A value that could is refused with a message
 * saying how to write it, rather than rewritten: a stored template either renders as it did or
 * fails saying why, never silently means something else.
 *
 * - xml: `<` and `&` are refused (write text with `| escape`, markup with `| safe`); quotes are
 *   written as `&quot;` and `&apos;`, the same text to an XML parser, so an attribute's value
 *   cannot end early;
 * - json: a quote, a backslash or a control character is refused (write a JSON value with
 *   `| dump`, quotes included);
 * - cli: a line break or another control character (Ctrl-Z, Ctrl-C) is refused.
 *
 * What the template marks as its own text passes as written: `| safe`, `| escape`, a macro's
 * output (nunjucks' SafeString), and in JSON templates `| dump`'s output.
 */
import { nunjucks } from './syntax';

/** A template's config_format, which decides what its values may hold. */
export type RenderFormat = 'cli' | 'xml' | 'json';

const { SafeString } = nunjucks.runtime;

/** The format of the render in progress: renders are synchronous, one at a time in a thread. */
let current: RenderFormat | undefined;

/** Runs one render of `format`, so that `| dump` knows whether its JSON is the payload's own text. */
export function renderingAs<T>(format: RenderFormat | undefined, render: () => T): T {
  const outer = current;
  current = format;
  try {
    return render();
  } finally {
    current = outer;
  }
}

/** `| dump`: JSON text, the template's own in a JSON template; elsewhere a value like any other. */
export function dump(value: unknown, spaces?: number | string): unknown {
  const text = JSON.stringify(value, null, spaces);
  return text !== undefined && current === 'json' ? new SafeString(text) : text;
}

const refused = (what: string, format: string, how: string) => `a value written by {{ }} holds ${what}, which ${format}; ${how}`;

const RULES: Record<RenderFormat, { test: RegExp; why(found: string): string }> = {
  xml: {
    // Control characters are not XML 1.0 text (tab, line feed and carriage return are).
    test: /[<&\x00-\x08\x0b\x0c\x0e-\x1f]/,
    why: (found) =>
      /[<&]/.test(found)
        ? refused(`'${found}'`, 'an XML template would send as markup', 'write it as text with | escape, or as markup with | safe')
        : refused('a control character', 'XML cannot carry', 'remove it from the value'),
  },
  json: {
    test: /["\\\x00-\x1f]/,
    why: (found) =>
      refused(
        found === '"' ? 'a quote' : found === '\\' ? 'a backslash' : 'a control character',
        'would end or break its JSON string',
        'write it as a JSON value with | dump (quotes included), or mark JSON text with | safe',
      ),
  },
  cli: {
    test: /[\x00-\x08\x0a-\x1f\x7f]/,
    why: (found) =>
      /[\r\n]/.test(found)
        ? refused(
            'a line break',
            'a CLI template would type as a separate command',
            'write the lines in the template (a loop), or mark a value meant to span lines with | safe',
          )
        : refused('a control character', 'a CLI session would take as a keystroke (Ctrl-Z leaves configuration mode)', 'remove it from the value'),
  },
};

/** The text a {{ }} value adds to a render of `format` (undefined: written as is); throws when it may not. */
export function writeValue(value: unknown, format: RenderFormat | undefined): string {
  if (value === undefined || value === null) return '';
  const text = String(value);
  if (value instanceof SafeString || !format) return text;
  const found = RULES[format].test.exec(text);
  if (found) throw new Error(RULES[format].why(found[0]));
  return format === 'xml' ? text.replace(/"/g, '&quot;').replace(/'/g, '&apos;') : text;
}
