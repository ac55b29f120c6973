/**
 * Driver registry: one DeviceDriver per transport. The job runner asks here for the driver of
 * a transport and never imports a driver itself; a transport without an entry answers a clear
 * error in the job result.
 */
import { gnmiDriver } from './gnmi';
import { netconfDriver } from './netconf';
import { sshCliDriver } from './ssh';
import type { DeviceDriver, Transport } from './types';

export type DriverRegistry = ReadonlyMap<Transport, DeviceDriver>;

export const DRIVERS: DriverRegistry = new Map<Transport, DeviceDriver>([
  ['ssh', sshCliDriver],
  ['netconf', netconfDriver],
  ['gnmi', gnmiDriver],
]);

/** A registry with some drivers replaced (tests and benchmarks). */
export function withDrivers(overrides: Partial<Record<Transport, DeviceDriver>>, base: DriverRegistry = DRIVERS): DriverRegistry {
  const map = new Map(base);
  for (const [transport, driver] of Object.entries(overrides)) if (driver) map.set(transport as Transport, driver);
  return map;
}
