/**
 * Whether a rendered payload carries nothing. A replace with such a payload would wipe its
 * target on the device (the README's `{"interface": []}` on /interfaces), so deployments refuse
 * it unless the request sends allow_empty_replace. For NETCONF what counts is each element the
 * push replaces, not the whole fragment: the element the target_path selects (whose ancestors
 * carry the list keys, so the fragment as a whole has text) and any element carrying its own
 * nc:operation="replace" (a merge template can hold one).
 *
 * A replace whose target_path selects a list entry (`/interfaces/interface[name=eth0]`) and whose
 * payload carries nothing but that entry's keys (`{"name": "eth0", "config": {"name": "eth0"}}`,
 * `<interface><name>eth0</name></interface>`) empties the entry just the same: the key leaves the
 * target_path names are not content.
 */
import { parsePath } from '../../../shared/src/device/gnmi-path';
import { hasOperationAttr, isNetconfPath, markedElements, ownOperation } from '../../../shared/src/device/netconf-edit';
import { child, elements, isElement, localName, parseXml, textOf, type XElement, type XNode } from '../../../shared/src/device/xml-tree';

/** A JSON value with no leaf: null, [], {}, or containers holding only such values. */
function jsonHasLeaf(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some(jsonHasLeaf);
  if (typeof value === 'object') return Object.values(value as Record<string, unknown>).some(jsonHasLeaf);
  return true;
}

/**
 * The list keys a replace at the target_path finds in the value it sends, which are not content:
 * `keys` ([k=v] of the last step) as leaves of the replaced node and, with `inConfig`, inside its
 * `config` container too (OpenConfig lists repeat their keys there). A target_path ending in
 * `/config` under a keyed step (`/interfaces/interface[name=eth0]/config`) selects that container:
 * the keys of the step before are its leaves. Keys are compared by local name (no module prefix)
 * and value. null for no target_path, one without keys there, or one that does not parse.
 */
interface KeyLeaves {
  keys: Map<string, string>;
  inConfig: boolean;
}

function keyLeaves(targetPath: string | null): KeyLeaves | null {
  if (!targetPath || targetPath.trim() === '') return null;
  let steps;
  try {
    steps = parsePath(targetPath.trim()).elem;
  } catch {
    // A target_path that does not parse: the agent reports it.
    return null;
  }
  const keysOf = (i: number) => new Map(Object.entries(steps[i]?.key ?? {}).map(([k, v]) => [localName(k), v.trim()]));
  const last = steps.length - 1;
  if (last < 0) return null;
  if (Object.keys(steps[last].key).length > 0) return { keys: keysOf(last), inConfig: true };
  if (localName(steps[last].name) === 'config' && last > 0 && Object.keys(steps[last - 1].key).length > 0)
    return { keys: keysOf(last - 1), inConfig: false };
  return null;
}

/** Whether a leaf named `name` with this value is one of the keys. */
function isKey(k: KeyLeaves, name: string, value: string): boolean {
  return k.keys.get(localName(name)) === value.trim();
}

/** Whether a JSON value has a leaf besides the key leaves (at its top and, if asked, in its config container). */
function jsonHasContent(value: unknown, k: KeyLeaves): boolean {
  if (Array.isArray(value)) return value.some((v) => jsonHasContent(v, k));
  if (value === null || typeof value !== 'object') return jsonHasLeaf(value);
  return Object.entries(value as Record<string, unknown>).some(([name, v]) => {
    if ((typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && isKey(k, name, String(v))) return false;
    if (k.inConfig && localName(name) === 'config' && v !== null && typeof v === 'object' && !Array.isArray(v))
      return jsonHasContent(v, { ...k, inConfig: false });
    return jsonHasLeaf(v);
  });
}

/** A json replace that carries no leaf, or none but the keys of the list entry its target_path selects. */
function emptyJsonReplace(p: PushedPayload): boolean {
  if (isEmptyPayload(p.rendered_config, 'json')) return true;
  const k = keyLeaves(p.target_path);
  if (!k) return false;
  try {
    return !jsonHasContent(JSON.parse(p.rendered_config), k);
  } catch {
    // Not JSON: the payload check reports it.
    return false;
  }
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

/** Whether an element holds text besides the key leaves (at its top and, if asked, in its config container). */
function hasContent(el: XElement, k: KeyLeaves | null): boolean {
  if (!k) return hasText(el.children);
  return el.children.some((n) => {
    if (!isElement(n)) return n.text.trim() !== '';
    if (elements(n.children).length === 0 && isKey(k, n.name, textOf(n))) return false;
    if (k.inConfig && localName(n.name) === 'config') return hasContent(n, { ...k, inConfig: false });
    return hasText(n.children);
  });
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
  const isPath = p.target_path !== null && isNetconfPath(p.target_path);
  const keys = isPath ? keyLeaves(p.target_path) : null;
  const empty = marked.find((el) => !hasContent(el, keys));
  if (!empty) return undefined;
  return { path: isPath ? (p.target_path as string).trim() : step(empty) };
}

/**
 * The services that would empty what they replace: json and cli replaces with an empty payload
 * (json: or one holding only the keys its target_path names), and NETCONF pushes with an empty
 * replaced element or one holding only those keys, each returned with target_path set to that
 * element's path, which the refusal and the log name.
 */
export function findEmptyReplaces<J extends PushedPayload>(jobs: J[]): J[] {
  return jobs.flatMap((j) => {
    if (j.config_format === 'json') return j.operation === 'replace' && emptyJsonReplace(j) ? [j] : [];
    if (j.config_format === 'cli') return j.operation === 'replace' && isEmptyPayload(j.rendered_config, 'cli') ? [j] : [];
    const empty = emptyXmlReplace(j);
    return empty ? [{ ...j, target_path: empty.path }] : [];
  });
}
