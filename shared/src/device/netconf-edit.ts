/**
 * Which elements of a NETCONF config fragment an edit marks with its operation, as the agent's
 * NETCONF driver pushes it (agent/src/drivers/netconf/edit.ts):
 *
 * - a fragment that already carries operation attributes (any `operation` attribute, whatever
 *   its prefix) is taken as written: the change's own operation marks nothing;
 * - a change whose target_path is a path ("/interfaces/interface[name=eth0]") marks the fragment
 *   elements that path selects (local names compared, list keys matched on child text);
 * - otherwise (no target_path, or one that does not start with '/') its top-level elements.
 *
 * The driver marks with them; the controller reads them to refuse, before anything is sent, a
 * replace that would empty what it replaces.
 */
import { parsePath, type PathElem } from './gnmi-path';
import { child, elements, isElement, localName, textOf, type XElement, type XNode } from './xml-tree';

/**
 * The operation an attribute gives its element: NETCONF's `operation` (any prefix), or Junos's own
 * `replace="replace"` and `delete="delete"`, which act the same on a Junos device (a `<syslog
 * replace="replace">` rendered empty empties syslog).
 */
function attrOperation(attr: string, value: string): string | undefined {
  if (attr.startsWith('xmlns')) return undefined;
  const name = localName(attr);
  if (name === 'operation') return value;
  return (name === 'replace' || name === 'delete') && value === name ? name : undefined;
}

/** Whether any element of the nodes, at any depth, carries an operation attribute. */
export function hasOperationAttr(nodes: XNode[]): boolean {
  return nodes.some((n) => isElement(n) && (ownOperation(n) !== undefined || hasOperationAttr(n.children)));
}

/** The operation attribute of the element itself, if any. */
export function ownOperation(el: XElement): string | undefined {
  for (const [attr, value] of Object.entries(el.attrs)) {
    const operation = attrOperation(attr, value);
    if (operation !== undefined) return operation;
  }
  return undefined;
}

function matches(el: XElement, step: PathElem): boolean {
  if (localName(el.name) !== localName(step.name)) return false;
  return Object.entries(step.key).every(([k, v]) => textOf(child(el, localName(k))).trim() === v);
}

/** The elements under `nodes` that the path steps select. */
export function selectPath(nodes: XNode[], steps: PathElem[]): XElement[] {
  const [first, ...rest] = steps;
  const hits = elements(nodes).filter((e) => matches(e, first));
  return rest.length === 0 ? hits : hits.flatMap((h) => selectPath(h.children, rest));
}

/** A target_path the NETCONF push selects elements with; any other text is only a label. */
export const isNetconfPath = (targetPath: string): boolean => targetPath.trim().startsWith('/');

/**
 * The elements of a fragment's top-level elements that the change's operation marks: none when
 * the fragment carries operation attributes of its own, the target_path's selection, or `top`.
 * Throws PathSyntaxError for a target_path that does not parse.
 */
export function markedElements(top: XElement[], targetPath: string | null | undefined): XElement[] {
  if (hasOperationAttr(top)) return [];
  if (!targetPath || !isNetconfPath(targetPath)) return top;
  const steps = parsePath(targetPath.trim()).elem;
  return steps.length === 0 ? top : selectPath(top, steps);
}
