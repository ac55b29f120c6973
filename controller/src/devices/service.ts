import type { Static } from '@sinclair/typebox';
import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import { isForeignKeyViolation, uniqueOr } from './db-errors';
import { type ImportRow, validateImportRows } from './import';
import { DeviceListCache } from './list-cache';
import type { ListOrder } from './list-order';
import { assertDeviceFields } from './rules';
import type { BulkFields, DeviceBody, DeviceChanges } from './schemas';
import type { DeviceFilter, DevicePin, DeviceStore } from './store';

/** A profile or site checked a moment ago was deleted before the write: the same 400 as a foreign one. */
const vanished = (constraint: string) => appError(constraint.includes('site') ? 'UNKNOWN_SITE' : 'UNKNOWN_PROFILE');

/** Cache key of a list request; empty filter values filter nothing, so they are left out. */
function listKey(orgId: string, filter: DeviceFilter, order: ListOrder, limit: number, offset: number): string {
  const used = Object.entries(filter)
    .filter(([, value]) => value !== undefined && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([orgId, limit, offset, used, order.sort ?? null, order.order ?? null]);
}

const IMPORT_COLUMNS = [
  'org_id',
  'profile_id',
  'source',
  'protocol',
  'created_by',
  'updated_by',
  'name',
  'host',
  'device_type',
  'manufacturer',
  'model',
  'platform',
  'site',
  'description',
];

/**
 * What devices need of connection profiles: whether a host may get a profile's credentials (its
 * allowed_networks). Implemented by ProfileService; declared here so devices import no profiles code.
 */
export interface ProfileNetworks {
  /** HOST_OUTSIDE_PROFILE_NETWORKS for a new device whose IP-address host is outside the profile's networks. */
  assertHostAllowed(orgId: string, profileId: string, host: string, device: string): Promise<void>;
  /** The same for existing devices, given the profile and the host they are getting (each when it changes). */
  assertDevicesAllowed(orgId: string, ids: string[], change: { profileId?: string; host?: string }): Promise<void>;
  /** Each import row's refusal under one profile (null: allowed). */
  hostCheck(orgId: string, profileId: string): Promise<(host: string, device: string) => string | null>;
}

/** Device rules shared by create, update, bulk edit and import. */
export class DeviceService {
  constructor(
    private readonly store: DeviceStore,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    private readonly profiles: ProfileNetworks,
  ) {}

  private readonly lists = new DeviceListCache();

  /**
   * The list response as JSON bytes (see DeviceStore.listJson). A remembered answer for the same
   * organization, filters and page is used only while the organization's list version is still
   * the one read with it (DeviceListCache says why that is safe): `currentVersion` when the
   * caller read it already (along with the session check), else one version lookup.
   */
  async listJson(orgId: string, filter: DeviceFilter, order: ListOrder, limit: number, offset: number, currentVersion?: number): Promise<Buffer> {
    const key = listKey(orgId, filter, order, limit, offset);
    const cached = this.lists.get(key);
    if (cached && cached.version === (currentVersion ?? (await this.store.listVersion(orgId)))) return cached.body;
    const { body, version } = await this.store.listJson(orgId, filter, order, limit, offset);
    const entry = { version, body: Buffer.from(body) };
    this.lists.set(key, entry);
    return entry.body;
  }

  async get(orgId: string, id: string) {
    const device = await this.store.find(orgId, id);
    if (!device) throw appError('DEVICE_NOT_FOUND');
    return device;
  }

  /** profile_id and site_id must name rows of the caller's organization. */
  private async checkReferences(orgId: string, refs: { profile_id?: string; site_id?: string | null }): Promise<void> {
    if (refs.profile_id === undefined && !refs.site_id) return;
    const ok = await this.store.references(orgId, refs);
    if (!ok.profile) throw appError('UNKNOWN_PROFILE');
    if (!ok.site) throw appError('UNKNOWN_SITE');
  }

  async create(me: AuthContext, body: Static<typeof DeviceBody>) {
    if (body.source === 'netbox') throw appError('INVALID_SOURCE');
    const row = { ...body, name: body.name.trim(), host: body.host.trim() };
    assertDeviceFields(row);
    await this.checkReferences(me.orgId, row);
    await this.profiles.assertHostAllowed(me.orgId, row.profile_id, row.host, row.name);
    const id = await uniqueOr(
      () => this.store.insert({ ...row, org_id: me.orgId, created_by: me.userId, updated_by: me.userId }),
      () => appError('DEVICE_NAME_TAKEN'),
      vanished,
    );
    if (!id) throw appError('DEVICE_NAME_TAKEN');
    await this.audit.byActor(me, 'device.created', { device_id: id, name: row.name });
    return this.get(me.orgId, id);
  }

  async update(me: AuthContext, id: string, body: Static<typeof DeviceChanges>) {
    if (Object.keys(body).length === 0) return this.get(me.orgId, id);
    const row = { ...body, ...(body.name !== undefined && { name: body.name.trim() }), ...(body.host !== undefined && { host: body.host.trim() }) };
    assertDeviceFields(row);
    await this.checkReferences(me.orgId, row);
    if (row.host !== undefined || row.profile_id !== undefined) {
      await this.profiles.assertDevicesAllowed(me.orgId, [id], { profileId: row.profile_id, host: row.host });
    }
    const changed = await uniqueOr(
      () => this.store.update(me.orgId, id, { ...row, updated_by: me.userId }),
      () => appError('DEVICE_NAME_TAKEN'),
      vanished,
    );
    if (changed === 0) throw appError('DEVICE_NOT_FOUND');
    await this.audit.byActor(me, 'device.updated', { device_id: id, fields: Object.keys(body) });
    return this.get(me.orgId, id);
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    let deleted: number;
    try {
      deleted = await this.store.delete(me.orgId, id);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw appError('DEVICE_IN_USE');
      throw err;
    }
    if (deleted === 0) throw appError('DEVICE_NOT_FOUND');
    await this.audit.byActor(me, 'device.deleted', { device_id: id });
  }

  /**
   * DELETE /api/devices/:id/ssh-host-key and /gnmi-certificate: the next SSH (or NETCONF) session,
   * or gNMI-over-TLS session, pins whatever key or certificate the device offers, and gets the
   * profile's credentials. Trusting a new identity with them needs configs.secrets (an organization
   * administrator) on top of devices.access, like setting where a profile's credentials may go.
   */
  async clearPin(me: AuthContext, id: string, pin: DevicePin): Promise<void> {
    if (!me.permissions.includes('configs.secrets')) {
      const what = pin === 'ssh_host_key' ? "a device's pinned SSH host key" : "a device's pinned gNMI certificate";
      throw appError('FORBIDDEN', `Insufficient permissions: clearing ${what} needs the configs.secrets permission (an organization administrator)`);
    }
    const { found, cleared } = await this.store.clearPin(me.orgId, id, pin);
    if (!found) throw appError('DEVICE_NOT_FOUND');
    if (pin === 'ssh_host_key') await this.audit.byActor(me, 'device.ssh_host_key_cleared', { device_id: id, fingerprint: cleared });
    else await this.audit.byActor(me, 'device.gnmi_certificate_cleared', { device_id: id, sha256: cleared });
  }

  async bulkUpdate(me: AuthContext, ids: string[], fields: Static<typeof BulkFields>): Promise<number> {
    if (ids.length === 0) throw appError('BULK_EMPTY_IDS');
    if (Object.keys(fields).length === 0) throw appError('BULK_EMPTY_FIELDS');
    assertDeviceFields(fields);
    await this.checkReferences(me.orgId, fields);
    if (fields.profile_id !== undefined) await this.profiles.assertDevicesAllowed(me.orgId, ids, { profileId: fields.profile_id });
    const updated = await uniqueOr(
      () => this.store.bulkUpdate(me.orgId, ids, { ...fields, updated_by: me.userId }),
      () => appError('CONFLICT'),
      vanished,
    );
    await this.audit.byActor(me, 'device.bulk_updated', { fields: Object.keys(fields), updated });
    return updated;
  }

  /** Import rule 3: the profile_id query value, else the organization's default profile. */
  private async importProfile(orgId: string, requested: string | undefined): Promise<string> {
    if (requested !== undefined) {
      await this.checkReferences(orgId, { profile_id: requested });
      return requested;
    }
    const fallback = await this.settings.get<string | null>('devices.default_profile_id', orgId);
    if (!fallback) throw appError('IMPORT_NO_PROFILE');
    const ok = await this.store.references(orgId, { profile_id: fallback });
    if (!ok.profile)
      throw appError(
        'IMPORT_NO_PROFILE',
        'The default connection profile (devices.default_profile_id) no longer exists: pass profile_id or change the setting',
      );
    return fallback;
  }

  /**
   * Import rules 1–5 of API.md: each row on its own, valid rows inserted set-based in one
   * transaction, names already present reported per row.
   */
  async import(me: AuthContext, source: 'csv' | 'json', rows: ImportRow[], requestedProfile: string | undefined) {
    const profileId = await this.importProfile(me.orgId, requestedProfile);
    const { valid: checked, errors } = validateImportRows(rows);
    // A row whose IP-address host is outside the profile's networks fails like any bad row (import rule 1).
    const refusal = await this.profiles.hostCheck(me.orgId, profileId);
    const valid = checked.filter(({ row, fields }) => {
      const error = refusal(fields.host, fields.name);
      if (error) errors.push({ row, name: fields.name, error });
      return !error;
    });
    const constants = { org_id: me.orgId, profile_id: profileId, source, protocol: 'ssh', created_by: me.userId, updated_by: me.userId };
    const written = await this.store.transaction((trx) =>
      this.store.insertMany(
        trx,
        IMPORT_COLUMNS,
        valid.map(({ fields }) => ({ ...constants, ...fields })),
      ),
    );
    await this.store.afterBulkWrite(written.length);
    const insertedNames = new Set(written.map((w) => w.name));
    for (const { row, fields } of valid) {
      if (!insertedNames.has(fields.name)) errors.push({ row, name: fields.name, error: 'Device with this name already exists' });
    }
    errors.sort((a, b) => a.row - b.row);
    await this.audit.byActor(me, 'device.imported', { source, imported: written.length, failed: errors.length, profile_id: profileId });
    return { imported: written.length, failed: errors.length, errors };
  }
}
