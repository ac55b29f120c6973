/**
 * What a NetBox sync does, decided before anything is written: which listed devices can become
 * devices (mapListed), and which of those are new, changed or unchanged against the devices we
 * have (planWrites). Each device NetBox lists that cannot be synced becomes an error of the run,
 * never a failed run.
 */
import { hostRefusal } from '../profiles/service';
import type { NetworkLimits } from '../profiles/store';
import type { NetboxDevice } from './client';
import { type MappedDevice, type MappingOptions, mapNetboxDevice } from './mapping';
import type { SyncedDeviceRow } from './store';

export interface SyncError {
  netbox_id?: number;
  name?: string;
  error: string;
}

/** Owned by the sync: overwritten from NetBox on every run (notes, credentials and the rest are ours). */
export const OWNED = ['name', 'host', 'device_type', 'manufacturer', 'model', 'platform', 'site', 'serial_number', 'asset_tag'] as const;

const sameDevice = (row: SyncedDeviceRow, next: Record<string, unknown>) =>
  OWNED.every((key) => row[key] === next[key]) &&
  row.tags.join('\u0000') === (next.tags as string[]).join('\u0000') &&
  row.external_id === next.external_id &&
  row.netbox_removed_at === null;

/**
 * The listed devices as devices (the first of two with one name wins), the NetBox ids seen (a
 * device NetBox lists but we cannot map is still not missing), and why the others were skipped.
 */
export function mapListed(listed: NetboxDevice[], options: MappingOptions) {
  const errors: SyncError[] = [];
  const seen = new Set<string>();
  const firstByName = new Map<string, number>();
  const mapped: MappedDevice[] = [];
  for (const nb of listed) {
    const result = mapNetboxDevice(nb, options);
    const netboxId = typeof nb?.id === 'number' ? nb.id : undefined;
    if (netboxId !== undefined) seen.add(String(netboxId));
    if ('error' in result) {
      errors.push({ ...(netboxId !== undefined && { netbox_id: netboxId }), ...(result.name && { name: result.name }), error: result.error });
      continue;
    }
    const earlier = firstByName.get(result.device.name);
    if (earlier !== undefined) {
      errors.push({ netbox_id: netboxId, name: result.device.name, error: `NetBox device ${earlier} has the same name` });
      continue;
    }
    firstByName.set(result.device.name, netboxId!);
    mapped.push(result.device);
  }
  return { mapped, seen, errors };
}

export interface PlanContext {
  orgId: string;
  userId: string;
  sourceId: string;
  /** The profile new devices get; null when there is none (they are refused). */
  profileId: string | null;
  /** NetBox ids listed by this run (mapListed). */
  seen: Set<string>;
  /** The limits of profileId and of the candidates' profiles, read once for the run. */
  limits: NetworkLimits;
}

/**
 * Rows to insert and to update, and how many are unchanged, for the mapped devices against
 * `candidates` (this source's devices and any device with one of their names); a device that
 * cannot be written is added to `errors`. A host the sync would give a device (a new one's, or a
 * change of an existing one's) must be inside the networks of the device's profile, as the API
 * requires; an existing device refused so is kept as it is, and its NetBox id is in `kept` (NetBox
 * lists it: it is not missing, even when its id there is new).
 */
export function planWrites(mapped: MappedDevice[], candidates: SyncedDeviceRow[], ctx: PlanContext, errors: SyncError[]) {
  const fromSource = (row: SyncedDeviceRow | undefined) => row?.source === 'netbox' && row.source_id === ctx.sourceId;
  const byExternal = new Map(candidates.filter(fromSource).map((row) => [row.external_id, row]));
  const byName = new Map(candidates.map((row) => [row.name, row]));
  const inserts: Record<string, unknown>[] = [];
  const updates: Record<string, unknown>[] = [];
  const kept: string[] = [];
  let unchanged = 0;
  for (const m of mapped) {
    const fail = (error: string) => errors.push({ netbox_id: Number(m.external_id), name: m.name, error });
    const refused = (profileId: string, outcome: string) => {
      const refusal = hostRefusal(m.host, ctx.limits.get(profileId), m.name);
      if (refusal) fail(`${refusal}; the device was not ${outcome}`);
      return refusal !== null;
    };
    const holder = byName.get(m.name);
    // A device NetBox deleted and re-created under the same name is the same device to us.
    const row = byExternal.get(m.external_id) ?? (fromSource(holder) && !ctx.seen.has(holder!.external_id ?? '') ? holder : undefined);
    const { mappedType, ...fields } = m;
    if (row) {
      if (holder && holder.id !== row.id) {
        fail('Another device already has this name');
        continue;
      }
      if (m.host !== row.host && refused(row.profile_id, 'updated')) {
        if (row.external_id) kept.push(row.external_id);
        continue;
      }
      const next = {
        ...fields,
        device_type: mappedType ? m.device_type : row.device_type,
        id: row.id,
        updated_by: ctx.userId,
        netbox_removed_at: null,
      };
      if (sameDevice(row, next)) unchanged += 1;
      else updates.push(next);
    } else if (holder) {
      fail('A device with this name already exists and was not synced from this NetBox source');
    } else if (!ctx.profileId) {
      fail('No connection profile for new devices: set profile_id on the source or devices.default_profile_id');
    } else if (!refused(ctx.profileId, 'created')) {
      inserts.push({
        ...fields,
        org_id: ctx.orgId,
        profile_id: ctx.profileId,
        source: 'netbox',
        source_id: ctx.sourceId,
        protocol: 'ssh',
        created_by: ctx.userId,
        updated_by: ctx.userId,
        netbox_last_synced_at: new Date().toISOString(),
      });
    }
  }
  return { inserts, updates, unchanged, kept };
}
