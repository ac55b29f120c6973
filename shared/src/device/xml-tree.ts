/**
 * An ordered XML tree on top of fast-xml-parser (preserveOrder mode): elements with their
 * attributes (names as written, prefixes kept) and children, comments dropped. Text is kept as
 * written (a description's trailing space or a banner's final newline is part of the value, and a
 * backup that lost it would restore a different value); only whitespace-only text, the indentation
 * between elements, is dropped. Readers of key values and rpc-error fields trim for themselves. The
 * NETCONF edit rules of ./netconf-edit.ts (on the controller and the agent) read config fragments
 * through it, and the agent's NETCONF driver builds on it (agent/src/drivers/netconf/xml.ts adds the
 * canonical serializer).
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
  trimValues: false,
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
      // Whitespace-only text is layout (or an empty container written across lines), never a value
      // worth keeping: dropping it keeps `<x>\n</x>` and `<x/>` the same node.
      if (text.trim() !== '') out.push({ text });
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
