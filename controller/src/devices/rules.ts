import { isIP } from 'node:net';
import { appError } from '../errors/app-error';

/** device_type values of API.md; each SSH CLI dialect is one of these. */
export const DEVICE_TYPES = [
  'vendor_ios',
  'vendor_nxos',
  'vendor_xe',
  'vendor_xr',
  'vendor_junos',
  'vendor_eos',
  'vendor_panos',
  'vendor_fw',
  'generic',
  'custom',
  'snmp',
] as const;

const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** An IPv4/IPv6 address or an RFC 1123 hostname (a dotted all-numeric name must be a valid IPv4). */
export function isValidHost(host: string): boolean {
  if (isIP(host) !== 0) return true;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (/^\d+$/.test(labels[labels.length - 1])) return false;
  return labels.every((label) => LABEL.test(label));
}

export function isDeviceType(value: string): boolean {
  return (DEVICE_TYPES as readonly string[]).includes(value);
}

/** Why host or device_type is unacceptable, or null. Shared by create, update, bulk edit, import and sync. */
export function deviceFieldProblem(fields: {
  host?: string;
  device_type?: string;
}): { code: 'INVALID_HOST' | 'INVALID_DEVICE_TYPE'; message: string } | null {
  if (fields.host !== undefined && !isValidHost(fields.host)) {
    return { code: 'INVALID_HOST', message: `host '${fields.host}' is not an IP address or a hostname` };
  }
  if (fields.device_type !== undefined && !isDeviceType(fields.device_type)) {
    return { code: 'INVALID_DEVICE_TYPE', message: `device_type '${fields.device_type}' is not one of: ${DEVICE_TYPES.join(', ')}` };
  }
  return null;
}

export function assertDeviceFields(fields: { host?: string; device_type?: string }): void {
  const problem = deviceFieldProblem(fields);
  if (problem) throw appError(problem.code, problem.message);
}
