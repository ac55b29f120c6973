/**
 * Where a structured template's replace or delete acts. gNMI replaces or deletes the subtree its
 * path names; NETCONF marks the elements its path selects, or, with no path, every top-level
 * element the template renders (shared/src/device/netconf-edit.ts). A replace or delete with no
 * target_path, or on the root, therefore takes out far more than the template lists: a template
 * meant to set one interface's MTU deletes the other interfaces. Templates refuse that shape when
 * saved, and stacks when they render (templates saved before the rule).
 */
import { parsePath } from '../../../shared/src/device/gnmi-path';
import { wholeConfigRoot } from '../../../shared/src/device/config-roots';
import { isNetconfPath } from '../../../shared/src/device/netconf-edit';

export interface PushShape {
  config_format: string;
  operation: string | null;
  target_path: string | null;
}

export interface TargetProblem {
  code: 'TARGET_PATH_REQUIRED' | 'ROOT_TARGET_REFUSED';
  /** Reads after "template X has": "operation replace and no target_path, so …". */
  detail: string;
}

/** A target path that parses to no element: "/", "origin:/". A path that does not parse is the agent's to report. */
function isRoot(path: string): boolean {
  try {
    return parsePath(path).elem.length === 0;
  } catch {
    return false;
  }
}

/** Why a structured replace or delete would hit the whole config or whole top-level containers; null when it names its subtree. */
export function targetProblem(t: PushShape): TargetProblem | null {
  const operation = t.operation ?? 'replace';
  if (t.config_format === 'cli' || operation === 'merge') return null;
  const replace = operation === 'replace';
  const needs =
    `A ${operation} needs a target_path naming the subtree it ${replace ? 'replaces' : 'deletes'}, e.g. ` +
    (replace
      ? '/interfaces/interface[name=eth0]; to add to the config without removing anything use operation merge'
      : '/interfaces/interface[name=eth1]');
  const path = t.target_path?.trim() || null;
  const netconf = t.config_format === 'xml';
  const wholeTops = replace
    ? 'the NETCONF push would replace each top-level element the template renders as a whole, removing whatever the template does not list under it'
    : 'the NETCONF push would delete each top-level element the template renders, with everything under it';
  if (path !== null && (!netconf || isNetconfPath(path)) && isRoot(path)) {
    const what = netconf ? wholeTops : `gNMI would ${operation} the device's entire configuration${replace ? ' with what the template renders' : ''}`;
    return { code: 'ROOT_TARGET_REFUSED', detail: `operation ${operation} on target_path '${path}', the root: ${what}. ${needs}` };
  }
  const platform = path !== null && (!netconf || isNetconfPath(path)) ? wholeConfigRoot(path) : null;
  if (platform) {
    return {
      code: 'ROOT_TARGET_REFUSED',
      detail:
        `operation ${operation} on target_path '${path}', which holds the whole ${platform} configuration: ` +
        `the push would ${operation} all of it. ${needs}`,
    };
  }
  if (path === null) {
    const what = netconf ? wholeTops : `gNMI has no path to ${operation}`;
    return { code: 'TARGET_PATH_REQUIRED', detail: `operation ${operation} and no target_path, so ${what}. ${needs}` };
  }
  if (netconf && !isNetconfPath(path)) {
    return {
      code: 'TARGET_PATH_REQUIRED',
      detail: `operation ${operation} and target_path '${path}', which is not a path (NETCONF paths start with '/'), so ${wholeTops}. ${needs}`,
    };
  }
  return null;
}
