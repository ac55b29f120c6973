/**
 * Turning ConfigChanges into the body of one <edit-config>: each change's XML fragment gets its
 * operation (merge / replace / delete) as an nc:operation attribute, and the fragments go side by
 * side, in change order, into one <config> so a device receives every change in a single edit.
 *
 * Where the operation goes (the rules of shared/src/device/netconf-edit.ts, which the controller
 * also reads to refuse a replace that would empty what it replaces):
 * - a fragment that already carries operation attributes is taken as written;
 * - a change whose target_path is a path ("/interfaces/interface[name=eth0]") marks the
 *   fragment elements that path selects (local names compared, keys matched on child text);
 * - otherwise the fragment's top-level elements are marked (merge needs no mark: it is the
 *   default operation).
 */
import { hasOperationAttr, isNetconfPath, selectPath } from '../../../../shared/src/device/netconf-edit';
import { DriverError, type ConfigChange } from '../types';
import { parsePath, PathSyntaxError, type PathElem } from '../gnmi/path';
import { NS_BASE } from './client';
import { XmlError, elements, parseXml, serializeXml, type XElement, type XNode } from './xml';

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
  if (tp && isNetconfPath(tp)) {
    let steps: PathElem[];
    try {
      steps = parsePath(tp).elem;
    } catch (err) {
      throw new DriverError('device', `${label}: ${err instanceof PathSyntaxError ? err.message : String(err)}`);
    }
    targets = steps.length === 0 ? top : selectPath(top, steps);
    if (targets.length === 0) throw new DriverError('device', `${label}: target_path selects no element of the config fragment`);
  }
  if (change.operation !== 'merge') for (const t of targets) mark(t, change.operation);
  return top;
}

/**
 * The <config> contents for all changes, as one XML text: each change's fragment whole, in change
 * order, as top-level children of the one <config>.
 *
 * Why nothing is merged: whether two elements are the same list entry depends on the list's key
 * leaves, which only the device's YANG schema knows (seq, vlan-id, prefix, several leaves...). A
 * merge that guessed them fused distinct entries into one, the leaves of one overwriting the
 * other's. The device applies repeated top-level subtrees one after the other with its own keys,
 * so it combines changes that touch the same container or entry correctly. (Do not "tidy" this
 * into merging only look-alike elements either: netconfd stores two sibling entries with the same
 * key, inside one parent, as two entries.) One edit-config, rather than one per change, keeps a
 * deployment all-or-nothing on devices without a candidate too (one rollback-on-error edit); a
 * device without :rollback-on-error keeps what it took before an error, so the driver reports that
 * edit's failure as partial and the deploy job puts the backup back.
 */
export function buildEditContent(changes: ConfigChange[]): string {
  return changes.map((c, i) => serializeXml(markChange(c, i), null)).join('');
}
