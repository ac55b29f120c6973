/**
 * One loopback address per simulated device (Linux routes all of 127/8 to lo), so a fleet can
 * listen on one port, a device per address, as a real network does, and share one profile.
 */

/** 127.0.0.1, 127.0.0.2, … 127.0.0.254, 127.0.1.1, … */
export function loopbackAddress(i: number): string {
  return `127.0.${Math.floor(i / 254)}.${(i % 254) + 1}`;
}
