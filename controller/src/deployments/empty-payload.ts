/**
 * Whether a rendered payload carries nothing. A replace with such a payload would wipe its
 * target on the device (the README's `{"interface": []}` on /interfaces), so deployments refuse
 * it unless the request sends allow_empty_replace. For NETCONF what counts is each element the
 * push replaces, not the whole fragment: the element the target_path selects (whose ancestors
 * carry the list keys, so the fragment as a whole has text) and any element carrying its own
 * nc:operation="replace" (a merge template can hold one).
 */
import { hasOperationAttr, isNetconfPath, markedElements, ownOperation } from '../../../shared/src/device/netconf-edit';
import { child, elements, isElement, localName, parseXml, textOf, type XElement, type XNode } from '../../../shared/src/device/xml-tree';

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

/** What the guard reads of one rendered service. */
export interface PushedPayload {
  rendered_config: string;
  config_format: 'json' | 'xml' | 'cli';
  operation: 'replace' | 'merge' | 'delete';
  target_path: string | null;
}

/** Whether any element under the nodes holds text. */
function hasText(nodes: XNode[]): boolean {
  return nodes.some((n) => (isElement(n) ? hasText(n.children) : n.text.trim() !== ''));
}

/** One step of an element's path: its local name, with [name=…] when it has a <name> key. */
function step(el: XElement): string {
  const key = textOf(child(el, 'name')).trim();
  return `/${localName(el.name)}${key ? `[name=${key}]` : ''}`;
}

/** The path of the first element carrying its own operation "replace" with no text under it. */
function emptyInlineReplace(nodes: XNode[], at: string): string | undefined {
  for (const el of elements(nodes)) {
    const path = at + step(el);
    if (ownOperation(el) === 'replace' && !hasText(el.children)) return path;
    const inner = emptyInlineReplace(el.children, path);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * Where a NETCONF push would empty what it replaces, as the driver marks the fragment
 * (shared/src/device/netconf-edit.ts): { path } of the emptied element, or undefined. Inline
 * delete and remove are the template author's deletions, never refused here.
 */
function emptyXmlReplace(p: PushedPayload): { path: string | null } | undefined {
  const wholeEmpty = p.operation === 'replace' && isEmptyPayload(p.rendered_config, 'xml');
  let top: XElement[];
  try {
    top = elements(parseXml(p.rendered_config));
  } catch {
    // Not well-formed: the payload check reports it.
    return wholeEmpty ? { path: p.target_path } : undefined;
  }
  if (hasOperationAttr(top)) {
    const path = emptyInlineReplace(top, '');
    return path === undefined ? undefined : { path };
  }
  if (p.operation !== 'replace') return undefined;
  if (wholeEmpty) return { path: p.target_path };
  let marked: XElement[];
  try {
    marked = markedElements(top, p.target_path);
  } catch {
    // A target_path that does not parse: the agent reports it.
    return undefined;
  }
  const empty = marked.find((el) => !hasText(el.children));
  if (!empty) return undefined;
  return { path: p.target_path && isNetconfPath(p.target_path) ? p.target_path.trim() : step(empty) };
}

/**
 * The services that would empty what they replace: json and cli replaces with an empty payload,
 * and NETCONF pushes with an empty replaced element (each returned with target_path set to that
 * element's path, which the refusal and the log name).
 */
export function findEmptyReplaces<J extends PushedPayload>(jobs: J[]): J[] {
  return jobs.flatMap((j) => {
    if (j.config_format !== 'xml') return j.operation === 'replace' && isEmptyPayload(j.rendered_config, j.config_format) ? [j] : [];
    const empty = emptyXmlReplace(j);
    return empty ? [{ ...j, target_path: empty.path }] : [];
  });
}
