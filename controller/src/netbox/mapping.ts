import { isDeviceType, isValidHost } from '../devices/rules';
import type { NetboxDevice } from './client';

/** The device fields a NetBox sync owns. device_type is owned only when platform_map names the platform. */
export interface NetboxOwnedFields {
  name: string;
  host: string;
  manufacturer: string;
  model: string;
  platform: string;
  site: string;
  serial_number: string;
  asset_tag: string;
  tags: string[];
  device_type: string;
}

export interface MappedDevice extends NetboxOwnedFields {
  external_id: string;
  /** Whether device_type came from platform_map (then a sync keeps it current on existing devices). */
  mappedType: boolean;
}

export interface MappingOptions {
  defaultDeviceType: string;
  platformMap: Record<string, string>;
}

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/**
 * One NetBox device → device fields, or why it cannot become a device. Host is the primary
 * IP (primary_ip, else primary_ip4, else primary_ip6) without its prefix length.
 */
export function mapNetboxDevice(nb: NetboxDevice, options: MappingOptions): { device: MappedDevice } | { error: string; name?: string } {
  if (typeof nb?.id !== 'number') return { error: 'NetBox returned a device without an id' };
  const name = text(nb.name);
  if (!name) return { error: `NetBox device ${nb.id} has no name` };
  if (name.length > 255) return { name, error: 'Name is longer than 255 characters' };
  const address = text((nb.primary_ip ?? nb.primary_ip4 ?? nb.primary_ip6)?.address);
  if (!address) return { name, error: 'No primary IP address in NetBox' };
  const host = address.split('/')[0];
  if (!isValidHost(host)) return { name, error: `Primary IP '${address}' is not an IP address` };
  const platformSlug = text(nb.platform?.slug);
  const platformName = text(nb.platform?.name);
  const mapped = options.platformMap[platformSlug] ?? options.platformMap[platformName];
  const device_type = mapped ?? options.defaultDeviceType;
  if (!isDeviceType(device_type)) return { name, error: `device_type '${device_type}' for platform '${platformSlug}' is not a known device_type` };
  return {
    device: {
      external_id: String(nb.id),
      name,
      host,
      manufacturer: text(nb.device_type?.manufacturer?.name),
      model: text(nb.device_type?.model),
      platform: platformName || platformSlug,
      site: text(nb.site?.name),
      serial_number: text(nb.serial),
      asset_tag: text(nb.asset_tag),
      tags: (nb.tags ?? []).map((tag) => text(tag?.name) || text(tag?.slug)).filter(Boolean),
      device_type,
      mappedType: mapped !== undefined,
    },
  };
}
