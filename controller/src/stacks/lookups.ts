import type { StackDevice } from './store';

/**
 * API-resource lookups: a variable whose value comes from the inventory, per device. Written
 * as "device.<field>", "device.metadata.<key>[.<key>…]" or "site.<field>" (the device's site),
 * or as {"resource": "device", "field": "host"}, or {"source": "device.host"}.
 */
export const DEVICE_FIELDS = [
  'id',
  'name',
  'host',
  'device_type',
  'manufacturer',
  'model',
  'platform',
  'site',
  'site_id',
  'serial_number',
  'asset_tag',
  'description',
  'protocol',
  'tags',
  'metadata',
] as const;
export const SITE_FIELDS = ['id', 'name', 'description', 'location'] as const;

export interface Lookup {
  resource: 'device' | 'site';
  path: string[];
  /** Canonical text, e.g. device.metadata.rack. */
  text: string;
}

/** Reads a lookup spec; a string reason when it is not one. */
export function parseLookup(spec: unknown): Lookup | string {
  let text: string | null = null;
  if (typeof spec === 'string') text = spec;
  else if (spec && typeof spec === 'object' && !Array.isArray(spec)) {
    const s = spec as Record<string, unknown>;
    if (typeof s.source === 'string') text = s.source;
    else if (typeof s.resource === 'string' && typeof s.field === 'string') text = `${s.resource}.${s.field}`;
  }
  if (text === null) return 'not a lookup (write "device.<field>" or {"resource": "device", "field": "<field>"})';
  const [resource, ...path] = text.trim().split('.');
  if (resource !== 'device' && resource !== 'site') return `unknown resource '${resource}' (device or site)`;
  const fields: readonly string[] = resource === 'device' ? DEVICE_FIELDS : SITE_FIELDS;
  if (path.length === 0 || !fields.includes(path[0])) return `unknown ${resource} field '${path[0] ?? ''}' (one of ${fields.join(', ')})`;
  if (path.length > 1 && !(resource === 'device' && path[0] === 'metadata')) return `${resource}.${path[0]} has no sub-fields`;
  return { resource, path, text: [resource, ...path].join('.') };
}

/** The lookup's value for one device, or why there is none. */
export function lookupValue(device: StackDevice, lookup: Lookup): { value: unknown } | { reason: string } {
  if (lookup.resource === 'site') {
    if (!device.site_id) return { reason: `device ${device.name} has no site` };
    const site: Record<string, unknown> = {
      id: device.site_id,
      name: device.site_name,
      description: device.site_description,
      location: device.site_location,
    };
    return { value: site[lookup.path[0]] };
  }
  let value: unknown = device[lookup.path[0] as keyof StackDevice];
  for (const key of lookup.path.slice(1)) {
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, key)) return { reason: `device ${device.name} has no ${lookup.text}` };
    value = (value as Record<string, unknown>)[key];
  }
  return { value };
}

/** Lookups of one service: the stack's variable_config sources, then the service's own api_variables. */
export function serviceLookups(
  variableConfig: Record<string, unknown>,
  apiVariables: Record<string, unknown> | undefined,
): Map<string, Lookup | string> {
  const out = new Map<string, Lookup | string>();
  for (const [name, config] of Object.entries(variableConfig ?? {})) {
    if (config && typeof config === 'object' && 'source' in config) out.set(name, parseLookup(config));
  }
  for (const [name, spec] of Object.entries(apiVariables ?? {})) out.set(name, parseLookup(spec));
  return out;
}
