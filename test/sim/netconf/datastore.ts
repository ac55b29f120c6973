/**
 * The simulated device's configuration datastore: an ordered XML tree with RFC 6241 edit-config
 * semantics (merge / replace / create / delete / remove / none) good enough for nested
 * containers and lists keyed by a <name> child. Namespaces are compared by local name.
 */
import { NS_BASE } from '../../../agent/src/drivers/netconf/client';
import { child, cloneNodes, isElement, localName, serializeXml, textOf, type XElement, type XNode } from '../../../agent/src/drivers/netconf/xml';

export type EditOp = 'merge' | 'replace' | 'create' | 'delete' | 'remove' | 'none';
const OPS: readonly string[] = ['merge', 'replace', 'create', 'delete', 'remove', 'none'];

/** An edit-config failure, turned into an <rpc-error> by the server. */
export class EditError extends Error {
  constructor(
    readonly tag: string,
    message: string,
    readonly path: string,
    readonly info = '',
  ) {
    super(message);
  }
}

function opOf(el: XElement): EditOp | undefined {
  for (const [k, v] of Object.entries(el.attrs)) {
    if (localName(k) === 'operation' && !k.startsWith('xmlns')) {
      if (!OPS.includes(v))
        throw new EditError(
          'bad-attribute',
          `unknown operation "${v}"`,
          '',
          `<bad-attribute>operation</bad-attribute><bad-element>${localName(el.name)}</bad-element>`,
        );
      return v as EditOp;
    }
  }
  return undefined;
}

/** A copy without NETCONF operation attributes (and their now unused nc namespace). */
function clean(nodes: XNode[]): XNode[] {
  return nodes.map((n) => {
    if (!isElement(n)) return { text: n.text };
    const attrs: Record<string, string> = {};
    for (const [k, v] of Object.entries(n.attrs)) {
      if (localName(k) === 'operation' && !k.startsWith('xmlns')) continue;
      if (k.startsWith('xmlns:') && v === NS_BASE) continue;
      attrs[k] = v;
    }
    return { name: n.name, attrs, children: clean(n.children) };
  });
}

function keyOf(el: XElement): string | undefined {
  const k = child(el, 'name');
  return k ? textOf(k).trim() : undefined;
}

function sameInstance(a: XElement, b: XElement): boolean {
  return localName(a.name) === localName(b.name) && keyOf(a) === keyOf(b);
}

function isLeaf(el: XElement): boolean {
  return el.children.every((c) => !isElement(c));
}

function step(el: XElement): string {
  const k = keyOf(el);
  return `/${localName(el.name)}${k !== undefined && !isLeaf(el) ? `[name='${k}']` : ''}`;
}

function editList(target: XNode[], src: XNode[], inherited: EditOp, path: string): void {
  for (const s of src) {
    if (!isElement(s)) continue;
    const op = opOf(s) ?? inherited;
    const here = path + step(s);
    const idx = target.findIndex((t) => isElement(t) && sameInstance(t, s));
    const existing = idx >= 0 ? (target[idx] as XElement) : undefined;
    switch (op) {
      case 'delete':
        if (!existing) throw new EditError('data-missing', 'delete of data that does not exist', here);
        target.splice(idx, 1);
        break;
      case 'remove':
        if (existing) target.splice(idx, 1);
        break;
      case 'create':
        if (existing) throw new EditError('data-exists', 'create of data that already exists', here);
        target.push(clean([s])[0]);
        break;
      case 'replace':
        if (existing) target[idx] = clean([s])[0];
        else target.push(clean([s])[0]);
        break;
      case 'merge':
      case 'none': {
        if (isLeaf(s)) {
          if (op === 'none') break;
          // An empty element merged onto an existing container changes nothing.
          if (existing && !isLeaf(existing) && s.children.length === 0) break;
          if (existing) existing.children = clean(s.children);
          else target.push(clean([s])[0]);
          break;
        }
        let node = existing;
        if (!node) {
          node = { ...clean([{ ...s, children: [] }])[0] } as XElement;
          target.push(node);
        }
        editList(node.children, s.children, op, here);
        break;
      }
    }
  }
}

export class Datastore {
  constructor(public nodes: XNode[] = []) {}

  clone(): Datastore {
    return new Datastore(cloneNodes(this.nodes));
  }

  /** Apply <config> contents; throws EditError and leaves the datastore unchanged on failure. */
  edit(config: XNode[], defaultOperation: 'merge' | 'replace' | 'none'): void {
    if (defaultOperation === 'replace') {
      // A replace default still honours explicit operations below the top (create/delete...).
      const next: XNode[] = [];
      editList(next, config, 'merge', '');
      this.nodes = next;
      return;
    }
    const next = cloneNodes(this.nodes);
    editList(next, config, defaultOperation, '');
    this.nodes = next;
  }

  text(): string {
    return serializeXml(this.nodes);
  }
}
