import type { Static } from '@sinclair/typebox';
import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import type { AuthContext } from '../auth/auth-service';
import { uniqueOr } from '../devices/db-errors';
import { isDeviceType } from '../devices/rules';
import type { DeviceStore } from '../devices/store';
import { appError } from '../errors/app-error';
import type { FastifyBaseLogger } from 'fastify';
import type { Knex } from 'knex';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import { networkLimits } from '../profiles/store';
import { type DeviceFilters, NetboxClient, NetboxError } from './client';
import { type DestinationPolicy, DestinationRefused } from './destination';
import type { SourceBody, SourceChanges } from './schemas';
import type { NetboxStore, SyncedDeviceRow } from './store';
import { OWNED, mapListed, planWrites, type SyncError } from './sync-plan';

const INSERT_COLUMNS = [
  'org_id',
  'profile_id',
  'source',
  'source_id',
  'external_id',
  'protocol',
  'created_by',
  'updated_by',
  'netbox_last_synced_at',
  ...OWNED,
  'tags',
];
const UPDATE_COLUMNS = ['id', 'external_id', 'updated_by', 'netbox_removed_at', ...OWNED, 'tags'];
const RESERVED_FILTERS = new Set(['limit', 'offset', 'brief', 'format', 'ordering']);

interface SyncCounts {
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
}

/** http(s) base URL without credentials, trailing slash or a trailing /api. */
export function normalizeNetboxUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw appError('NETBOX_INVALID_URL', `url '${raw}' is not a URL; give the NetBox base URL such as https://netbox.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw appError('NETBOX_INVALID_URL');
  if (url.username || url.password) throw appError('NETBOX_INVALID_URL', 'url must not contain a user or password; the token authenticates');
  if (url.search || url.hash) throw appError('NETBOX_INVALID_URL', 'url must not contain a query or fragment; put filters in device_filters');
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api$/, '')}`;
}

/** NetBox sources (token sealed, never returned) and the sync that imports and updates devices. */
export class NetboxService {
  constructor(
    private readonly store: NetboxStore,
    private readonly devices: DeviceStore,
    private readonly secrets: SecretBox,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    /** The destination rules as they stand now (the setting may change between requests). */
    private readonly policy: () => Promise<DestinationPolicy>,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The organization's NetBox sources (tokens never included). */
  list(orgId: string) {
    return this.store.list(orgId);
  }

  async get(orgId: string, id: string) {
    const source = await this.store.find(orgId, id);
    if (!source) throw appError('NETBOX_SOURCE_NOT_FOUND');
    return source;
  }

  /**
   * A source's URL decides where the controller connects (with the token): setting it needs an
   * organization administrator (settings.manage), and the URL must pass the destination rules.
   * Sending the URL a source already has changes nothing, so it needs neither.
   */
  private async checkUrl(me: AuthContext, url: string, current?: string): Promise<string> {
    const normalized = normalizeNetboxUrl(url);
    if (normalized === current) return normalized;
    if (!me.permissions.includes('settings.manage')) {
      throw appError('FORBIDDEN', "Setting a NetBox source's url needs the settings.manage permission (an organization administrator)");
    }
    const policy = await this.policy();
    try {
      await policy.check(normalized);
    } catch (err) {
      if (err instanceof DestinationRefused) throw appError('NETBOX_URL_NOT_ALLOWED', err.message);
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code !== 'string') throw err;
      throw appError('NETBOX_URL_NOT_ALLOWED', `The host of url '${normalized}' does not resolve (${code}); check the name`);
    }
    return normalized;
  }

  private async columns(me: AuthContext, body: Static<typeof SourceChanges>, currentUrl?: string): Promise<Record<string, unknown>> {
    const { orgId } = me;
    const { token, url, name, ...rest } = body;
    if (rest.default_device_type !== undefined && !isDeviceType(rest.default_device_type)) {
      throw appError('NETBOX_INVALID_SETTING', `default_device_type '${rest.default_device_type}' is not a device_type`);
    }
    for (const [platform, type] of Object.entries(rest.platform_map ?? {})) {
      if (!isDeviceType(type)) throw appError('NETBOX_INVALID_SETTING', `platform_map['${platform}'] = '${type}' is not a device_type`);
    }
    for (const key of Object.keys(rest.device_filters ?? {})) {
      if (RESERVED_FILTERS.has(key)) throw appError('NETBOX_INVALID_SETTING', `device_filters cannot set '${key}'; the sync pages by itself`);
    }
    if (rest.profile_id && !(await this.devices.references(orgId, { profile_id: rest.profile_id })).profile) throw appError('UNKNOWN_PROFILE');
    return {
      ...rest,
      ...(name !== undefined && { name: name.trim() }),
      ...(url !== undefined && { url: await this.checkUrl(me, url, currentUrl) }),
      ...(token !== undefined && { token_enc: await this.secrets.seal(token) }),
    };
  }

  async create(me: AuthContext, body: Static<typeof SourceBody>) {
    const row = await this.columns(me, body);
    const id = await this.store.insert({ ...row, org_id: me.orgId, created_by: me.userId, updated_by: me.userId });
    if (!id) throw appError('NETBOX_SOURCE_NAME_TAKEN');
    await this.audit.byActor(me, 'netbox.source_created', { source_id: id, name: row.name, url: row.url });
    return this.get(me.orgId, id);
  }

  async update(me: AuthContext, id: string, body: Static<typeof SourceChanges>) {
    const source = body.url === undefined && body.verify_ssl !== false ? undefined : await this.get(me.orgId, id);
    // Turning the TLS check off sends the token to whoever answers on the path: as much a choice of
    // destination as the URL, so it takes the same permission.
    if (body.verify_ssl === false && source?.verify_ssl !== false && !me.permissions.includes('settings.manage')) {
      throw appError('FORBIDDEN', "Turning a NetBox source's verify_ssl off needs the settings.manage permission (an organization administrator)");
    }
    const row = await this.columns(me, body, source?.url);
    const changed = await uniqueOr(
      () => this.store.update(me.orgId, id, { ...row, updated_by: me.userId }),
      () => appError('NETBOX_SOURCE_NAME_TAKEN'),
    );
    if (changed === 0) throw appError('NETBOX_SOURCE_NOT_FOUND');
    await this.audit.byActor(me, 'netbox.source_updated', { source_id: id, fields: Object.keys(body) });
    return this.get(me.orgId, id);
  }

  /** Devices synced from the source stay (source netbox, no source id). */
  async delete(me: AuthContext, id: string): Promise<void> {
    if ((await this.store.delete(me.orgId, id)) === 0) throw appError('NETBOX_SOURCE_NOT_FOUND');
    await this.audit.byActor(me, 'netbox.source_deleted', { source_id: id });
  }

  private async client(orgId: string, id: string) {
    const source = await this.store.findForSync(orgId, id);
    if (!source) throw appError('NETBOX_SOURCE_NOT_FOUND');
    const client = new NetboxClient({
      url: source.url,
      token: await this.secrets.open(source.token_enc),
      verifySsl: source.verify_ssl,
      timeoutMs: source.timeout_seconds * 1000,
      policy: await this.policy(),
    });
    return { source, client };
  }

  /** Connection test: reaches NetBox with the token and counts devices matching the filters. */
  async test(orgId: string, id: string): Promise<{ ok: boolean; count?: number; netbox_version?: string; error?: string }> {
    const { source, client } = await this.client(orgId, id);
    try {
      const { count, apiVersion } = await client.count(source.device_filters);
      return { ok: true, count, ...(apiVersion && { netbox_version: apiVersion }) };
    } catch (err) {
      if (err instanceof NetboxError) return { ok: false, error: this.failed(source.id, err) };
      throw err;
    } finally {
      await client.close();
    }
  }

  /** The failure's message for the caller; what NetBox answered, or why nothing did, goes to the server log only. */
  private failed(sourceId: string, err: NetboxError): string {
    this.log.warn({ source_id: sourceId, remote_body: err.remoteBody, cause: err.detail }, `NetBox source failed: ${err.message}`);
    return err.message;
  }

  /** Import rule 3 for syncs: the source's profile, else the organization's default, else none. */
  private async profileFor(orgId: string, sourceProfile: string | null): Promise<string | null> {
    const candidate = sourceProfile ?? (await this.settings.get<string | null>('devices.default_profile_id', orgId));
    if (!candidate) return null;
    return (await this.devices.references(orgId, { profile_id: candidate })).profile ? candidate : null;
  }

  /** New devices get profileId and existing ones keep theirs: the limits of all those profiles, in one query. */
  private limits(trx: Knex.Transaction, orgId: string, profileId: string | null, candidates: SyncedDeviceRow[]) {
    const ids = new Set(candidates.map((row) => row.profile_id));
    if (profileId) ids.add(profileId);
    return networkLimits(trx, orgId, [...ids]);
  }

  /** A sync's run row and audit record; fatal: NetBox could not be read, so nothing changed and no device counts as failed. */
  private async recordSync(
    me: AuthContext,
    source: { id: string; name: string },
    started: { startedAt: Date; t0: number },
    counts: SyncCounts,
    errors: SyncError[],
    fatal: boolean,
  ) {
    const worked = counts.added + counts.updated + counts.unchanged + counts.removed > 0;
    const status = fatal ? 'failed' : errors.length === 0 ? 'success' : worked ? 'partial' : 'failed';
    const failed = fatal ? 0 : errors.length;
    const run = await this.store.recordRun(
      {
        org_id: me.orgId,
        source_id: source.id,
        source_name: source.name,
        status,
        ...counts,
        failed,
        errors,
        duration_ms: Math.round(performance.now() - started.t0),
        started_at: started.startedAt,
        triggered_by: me.userId,
      },
      source.id,
      me.orgId,
    );
    await this.audit.byActor(me, 'netbox.synced', { source_id: source.id, status, ...counts, failed });
    return run;
  }

  /**
   * Reads every matching device from NetBox, then in one transaction (serialized per source)
   * adds new devices, updates changed ones, and marks (or deletes) devices of this source that
   * NetBox no longer lists. A NetBox failure changes nothing and is reported in the result.
   */
  async sync(me: AuthContext, id: string) {
    const startedAt = new Date();
    const t0 = performance.now();
    const { source, client } = await this.client(me.orgId, id);
    const finish = (counts: SyncCounts, errors: SyncError[], fatal = false) => this.recordSync(me, source, { startedAt, t0 }, counts, errors, fatal);

    let listed;
    try {
      listed = await client.devices(source.device_filters as DeviceFilters);
    } catch (err) {
      if (err instanceof NetboxError)
        return finish({ added: 0, updated: 0, unchanged: 0, removed: 0 }, [{ error: this.failed(source.id, err) }], true);
      throw err;
    } finally {
      await client.close();
    }

    const { mapped, seen, errors } = mapListed(listed, { defaultDeviceType: source.default_device_type, platformMap: source.platform_map });
    const profileId = await this.profileFor(me.orgId, source.profile_id);

    const counts = await this.devices.transaction(async (trx) => {
      await this.store.lockSource(trx, source.id);
      const candidates = await this.store.syncCandidates(
        trx,
        me.orgId,
        source.id,
        mapped.map((m) => m.name),
      );
      const limits = await this.limits(trx, me.orgId, profileId, candidates);
      const ctx = { orgId: me.orgId, userId: me.userId, sourceId: source.id, profileId, seen, limits };
      const { inserts, updates, unchanged, kept } = planWrites(mapped, candidates, ctx, errors);
      const present = [...seen, ...kept];
      const written = new Set((await this.devices.insertMany(trx, INSERT_COLUMNS, inserts)).map((w) => w.name));
      for (const row of inserts) {
        if (!written.has(row.name as string))
          errors.push({ netbox_id: Number(row.external_id), name: row.name as string, error: 'Device with this name already exists' });
      }
      const updated = await this.devices.updateMany(trx, me.orgId, UPDATE_COLUMNS, updates);
      await this.store.touchSeen(trx, me.orgId, source.id, present);
      const removed = await this.store.removeMissing(trx, me.orgId, source.id, present, source.delete_missing);
      return { added: written.size, updated, unchanged, removed };
    });
    await this.devices.afterBulkWrite(counts.added + counts.updated);
    return finish(counts, errors);
  }

  history(orgId: string, sourceId: string | undefined, limit: number, offset: number) {
    return this.store.history(orgId, sourceId, limit, offset);
  }
}
