/**
 * Turning ConfigChanges into the body of one <edit-config>: each change's XML fragment gets its
 * operation (merge / replace / delete) as an nc:operation attribute, and all fragments are
 * merged into one <config> so a device receives every change in a single edit.
 *
 * Where the operation goes:
 * - a fragment that already carries operation attributes is taken as written;
 * - a change whose target_path is a path ("/interfaces/interface[name=eth0]") marks the
 *   fragment elements that path selects (local names compared, keys matched on child text);
 * - otherwise the fragment's top-level elements are marked (merge needs no mark: it is the
 *   default operation).
 */
import { DriverError, type ConfigChange } from '../types';
import { parsePath, PathSyntaxError, type PathElem } from '../gnmi/path';
import { NS_BASE } from './client';
import { XmlError, child, cloneNodes, elements, isElement, localName, parseXml, serializeXml, textOf, type XElement, type XNode } from './xml';

function hasOperationAttr(nodes: XNode[]): boolean {
  return nodes.some(
    (n) => isElement(n) && (Object.keys(n.attrs).some((a) => localName(a) === 'operation' && !a.startsWith('xmlns')) || hasOperationAttr(n.children)),
  );
}

function matches(el: XElement, step: PathElem): boolean {
  if (localName(el.name) !== localName(step.name)) return false;
  return Object.entries(step.key).every(([k, v]) => textOf(child(el, localName(k))).trim() === v);
}

function select(nodes: XNode[], steps: PathElem[]): XElement[] {
  const [first, ...rest] = steps;
  const hits = elements(nodes).filter((e) => matches(e, first));
  return rest.length === 0 ? hits : hits.flatMap((h) => select(h.children, rest));
}

function mark(el: XElement, operation: string): void {
  el.attrs['xmlns:nc'] = NS_BASE;
  el.attrs['nc:operation'] = operation;
}

/** The fragment of one change, parsed, with its operation marked. */
export function markChange(change: ConfigChange, index: number): XNode[] {
  const label = `change ${index + 1}${change.target_path ? ` (${change.target_path})` : ''}`;
  if (change.config_format !== 'xml') {
    throw new DriverError('device', `${label}: NETCONF takes XML config, got ${change.config_format}`);
  }
  let nodes: XNode[];
  try {
    nodes = parseXml(change.config);
  } catch (err) {
    throw new DriverError('device', `${label}: config is not well-formed XML: ${err instanceof XmlError ? err.message : String(err)}`);
  }
  const top = elements(nodes);
  if (top.length === 0) throw new DriverError('device', `${label}: config holds no XML element`);
  if (nodes.length !== top.length) throw new DriverError('device', `${label}: config has text outside any element`);
  if (hasOperationAttr(top)) return top;
  let targets = top;
  const tp = change.target_path?.trim();
  if (tp && tp.startsWith('/')) {
    let steps: PathElem[];
    try {
      steps = parsePath(tp).elem;
    } catch (err) {
      throw new DriverError('device', `${label}: ${err instanceof PathSyntaxError ? err.message : String(err)}`);
    }
    targets = steps.length === 0 ? top : select(top, steps);
    if (targets.length === 0) throw new DriverError('device', `${label}: target_path selects no element of the config fragment`);
  }
  if (change.operation !== 'merge') for (const t of targets) mark(t, change.operation);
  return top;
}

function keyOf(el: XElement): string | undefined {
  const k = child(el, 'name');
  return k ? textOf(k).trim() : undefined;
}

function ownOperation(el: XElement): string | undefined {
  const k = Object.keys(el.attrs).find((a) => localName(a) === 'operation' && !a.startsWith('xmlns'));
  return k === undefined ? undefined : el.attrs[k];
}

/** Same element instance: same name, namespace, list key and operation of its own. */
function sameNode(a: XElement, b: XElement): boolean {
  return a.name === b.name && a.attrs.xmlns === b.attrs.xmlns && ownOperation(a) === ownOperation(b) && keyOf(a) === keyOf(b);
}

/** Merge fragment `b` into `a` (same elements combined, list entries matched on <name>). */
function mergeInto(a: XNode[], b: XNode[]): void {
  for (const n of b) {
    if (!isElement(n)) continue;
    const same = a.find((m): m is XElement => isElement(m) && sameNode(m, n));
    const isLeaf = (e: XElement): boolean => e.children.every((c) => !isElement(c));
    if (same && !(isLeaf(same) && isLeaf(n))) {
      mergeInto(same.children, n.children);
    } else if (same && isLeaf(same) && isLeaf(n)) {
      same.children = n.children;
    } else {
      a.push(n);
    }
  }
}

/** The <config> contents for all changes, as one XML text. */
export function buildEditContent(changes: ConfigChange[]): string {
  const merged: XNode[] = [];
  changes.forEach((c, i) => mergeInto(merged, cloneNodes(markChange(c, i))));
  return serializeXml(merged, null);
}
