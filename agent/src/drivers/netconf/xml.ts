/**
 * The NETCONF driver's XML: the ordered tree of shared/src/device/xml-tree.ts, with a canonical
 * serializer: same content in, same text out (attributes sorted, whitespace normalised,
 * comments dropped), which is what config backups and diffs need.
 */
import { isElement, localName, textOf, type XElement, type XNode } from '../../../../shared/src/device/xml-tree';

// The tree and its parser are shared with the controller's NETCONF edit rules.
export {
  child,
  childrenNamed,
  elements,
  isElement,
  localName,
  parseXml,
  textOf,
  XmlError,
  type XElement,
  type XNode,
  type XText,
} from '../../../../shared/src/device/xml-tree';

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
