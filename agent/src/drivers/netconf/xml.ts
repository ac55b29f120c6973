/**
 * A small ordered XML tree on top of fast-xml-parser (preserveOrder mode), with a canonical
 * serializer: same content in, same text out (attributes sorted, whitespace normalised,
 * comments dropped), which is what config backups and diffs need.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export interface XElement {
  name: string;
  attrs: Record<string, string>;
  children: XNode[];
}
export interface XText {
  text: string;
}
export type XNode = XElement | XText;

export class XmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlError';
  }
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Decodes numeric character references (&#65; &#x42;); the HTML named entities it also knows
  // cannot occur in well-formed NETCONF XML, which declares no DTD.
  htmlEntities: true,
});

type Ordered = Record<string, unknown>;

function convert(items: Ordered[]): XNode[] {
  const out: XNode[] = [];
  for (const item of items) {
    if ('#text' in item) {
      const text = String(item['#text']);
      if (text !== '') out.push({ text });
      continue;
    }
    const name = Object.keys(item).find((k) => k !== ':@');
    if (name === undefined) continue;
    const attrs: Record<string, string> = {};
    const rawAttrs = item[':@'] as Record<string, unknown> | undefined;
    if (rawAttrs) for (const [k, v] of Object.entries(rawAttrs)) attrs[k] = v === true ? '' : String(v);
    out.push({ name, attrs, children: convert((item[name] as Ordered[]) ?? []) });
  }
  return out;
}

/** Parse a document or a fragment (several top-level elements are allowed). */
export function parseXml(text: string): XNode[] {
  let body = text.trimStart();
  if (body.startsWith('<?xml')) {
    const end = body.indexOf('?>');
    if (end < 0) throw new XmlError('unterminated XML declaration');
    body = body.slice(end + 2);
  }
  if (body.trim() === '') return [];
  // Wrapped so that fragments with several top-level elements validate and parse too.
  const wrapped = `<sb-fragment>${body}</sb-fragment>`;
  const valid = XMLValidator.validate(wrapped, { allowBooleanAttributes: true });
  if (valid !== true) {
    throw new XmlError(`${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  }
  const top = convert(parser.parse(wrapped) as Ordered[])[0];
  return top && isElement(top) ? top.children : [];
}

export function isElement(n: XNode): n is XElement {
  return (n as XElement).name !== undefined;
}

export function localName(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

export function elements(nodes: XNode[]): XElement[] {
  return nodes.filter(isElement);
}

export function child(el: XElement, local: string): XElement | undefined {
  return el.children.find((c): c is XElement => isElement(c) && localName(c.name) === local);
}

export function childrenNamed(el: XElement, local: string): XElement[] {
  return el.children.filter((c): c is XElement => isElement(c) && localName(c.name) === local);
}

/** Concatenated text content of an element (direct text children only). */
export function textOf(el: XElement | undefined): string {
  if (!el) return '';
  return el.children
    .filter((c): c is XText => !isElement(c))
    .map((c) => c.text)
    .join('');
}

export function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

function attrOrder(a: string, b: string): number {
  const ax = a === 'xmlns' || a.startsWith('xmlns:') ? 0 : 1;
  const bx = b === 'xmlns' || b.startsWith('xmlns:') ? 0 : 1;
  if (ax !== bx) return ax - bx;
  return a < b ? -1 : a > b ? 1 : 0;
}

function openTag(el: XElement): string {
  const attrs = Object.keys(el.attrs)
    .sort(attrOrder)
    .map((k) => ` ${k}="${escapeAttr(el.attrs[k])}"`)
    .join('');
  return `<${el.name}${attrs}`;
}

/**
 * Canonical text: two-space indentation, one element per line, leaf text inline, attributes
 * sorted with namespace declarations first. `indent` = null gives compact output.
 */
export function serializeXml(nodes: XNode[], indent: string | null = '  ', depth = 0): string {
  const pad = indent === null ? '' : indent.repeat(depth);
  const nl = indent === null ? '' : '\n';
  let out = '';
  for (const n of nodes) {
    if (!isElement(n)) {
      out += `${pad}${escapeText(n.text)}${nl}`;
      continue;
    }
    if (n.children.length === 0) {
      out += `${pad}${openTag(n)}/>${nl}`;
    } else if (n.children.every((c) => !isElement(c))) {
      out += `${pad}${openTag(n)}>${escapeText(textOf(n))}</${n.name}>${nl}`;
    } else {
      out += `${pad}${openTag(n)}>${nl}${serializeXml(n.children, indent, depth + 1)}${pad}</${n.name}>${nl}`;
    }
  }
  return out;
}

/** Find the first element with the given local name, depth first. */
export function findElement(nodes: XNode[], local: string): XElement | undefined {
  for (const n of nodes) {
    if (!isElement(n)) continue;
    if (localName(n.name) === local) return n;
    const found = findElement(n.children, local);
    if (found) return found;
  }
  return undefined;
}

export function cloneNodes(nodes: XNode[]): XNode[] {
  return nodes.map((n) => (isElement(n) ? { name: n.name, attrs: { ...n.attrs }, children: cloneNodes(n.children) } : { text: n.text }));
}

/** Namespace prefixes used by element and attribute names in a subtree. */
function usedPrefixes(el: XElement, into: Set<string>): void {
  const add = (name: string): void => {
    const i = name.indexOf(':');
    if (i > 0 && name.slice(0, i) !== 'xmlns' && name.slice(0, i) !== 'xml') into.add(name.slice(0, i));
  };
  add(el.name);
  for (const a of Object.keys(el.attrs)) add(a);
  for (const c of el.children) if (isElement(c)) usedPrefixes(c, into);
}

/**
 * Lift a subtree out of its document: prefixed namespace declarations that the subtree uses but
 * inherits from ancestors are copied onto its top element, so it stays well-formed on its own.
 */
export function detachSubtrees(nodes: XNode[], inScope: Record<string, string>): XNode[] {
  return nodes.map((n) => {
    if (!isElement(n)) return n;
    const used = new Set<string>();
    usedPrefixes(n, used);
    const attrs = { ...n.attrs };
    for (const p of used) {
      const decl = `xmlns:${p}`;
      if (!(decl in attrs) && inScope[p] !== undefined) attrs[decl] = inScope[p];
    }
    return { ...n, attrs };
  });
}

/** Prefixed namespace declarations (prefix → uri) of an element. */
export function prefixDecls(el: XElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(el.attrs)) if (k.startsWith('xmlns:')) out[k.slice(6)] = v;
  return out;
}
