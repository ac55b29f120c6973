import { parsePath } from './gnmi-path';

/**
 * Top-level elements that hold a device's whole configuration on their own: a replace or delete of
 * one of them is a replace or delete of everything (a Junos NTP template with target_path
 * /configuration would leave the device with one NTP stanza). Matched by local name, so a module
 * prefix (`junos-conf-root:configuration`) does not hide one.
 */
const WHOLE_CONFIG_ROOTS: Record<string, string> = {
  configuration: 'Junos',
  configure: 'Nokia SR OS',
  native: 'Cisco IOS-XE',
  System: 'Cisco NX-OS',
};

/** The platform whose whole configuration `path` names (a lone root element), or null. */
export function wholeConfigRoot(path: string): string | null {
  let elems;
  try {
    elems = parsePath(path).elem;
  } catch {
    return null; // not a path: reported where it is used
  }
  if (elems.length !== 1 || Object.keys(elems[0].key).length > 0) return null;
  const name = elems[0].name.slice(elems[0].name.indexOf(':') + 1);
  return Object.hasOwn(WHOLE_CONFIG_ROOTS, name) ? WHOLE_CONFIG_ROOTS[name] : null;
}
