/**
 * Neighbors whose detail output does not name the local interface (IOS 12.2 prints no
 * "Local Intf:" line) get it from the summary table, which does: a summary row belongs to a
 * neighbor when its device id (cut to 20 characters) begins the neighbor's name and its port
 * is the neighbor's port. A neighbor no row claims, or more than one, stays without one.
 */
import { parseRaw, type TableSpec } from './engine';
import { interfaceKey } from '../../../shared/src/discovery/normalize';
import type { NeighborRecord } from '../../../shared/src/discovery/records';

export interface LocalInterfaceSource {
  command: string;
  parse: TableSpec;
}

export const lacksLocal = (n: NeighborRecord) => n.local_interface === '';

/** Fills local_interface from the summary text in place; answers how many it filled. */
export function fillLocalInterfaces(neighbors: NeighborRecord[], summaryText: string, spec: TableSpec): number {
  const rows = parseRaw(summaryText, spec).records.map((r) => r.groups);
  const used = new Set<number>();
  let filled = 0;
  for (const n of neighbors.filter(lacksLocal)) {
    const claims = rows
      .map((row, i) => ({ row, i }))
      .filter(({ row, i }) => !used.has(i) && row.local_interface && ownsRow(n, row.remote_name ?? '', row.remote_interface ?? ''));
    if (claims.length !== 1) continue;
    used.add(claims[0].i);
    n.local_interface = claims[0].row.local_interface!;
    filled += 1;
  }
  return filled;
}

function ownsRow(n: NeighborRecord, deviceId: string, port: string): boolean {
  const id = deviceId.trim().toLowerCase();
  const names = [n.remote_name, n.remote_chassis_id ?? ''].map((s) => s.toLowerCase());
  const sameName = id !== '' && names.some((name) => name.startsWith(id));
  const samePort = n.remote_interface === null || interfaceKey(n.remote_interface) === interfaceKey(port) || n.remote_interface === port;
  return sameName && samePort;
}
