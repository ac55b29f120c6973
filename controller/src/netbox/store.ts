import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { NamedOrgTable } from '../db/named-org-table';
import type { NetboxOwnedFields } from './mapping';

const SOURCE_COLUMNS = (db: Db) => [
  's.id',
  's.org_id',
  's.name',
  's.url',
  db.raw('true AS has_token'),
  's.device_filters',
  's.verify_ssl',
  's.profile_id',
  's.default_device_type',
  's.platform_map',
  's.delete_missing',
  's.timeout_seconds',
  db.raw("(SELECT count(*) FROM devices d WHERE d.source_id = s.id AND d.source = 'netbox')::int AS device_count"),
  's.last_sync_at',
  's.last_sync_status',
  's.created_at',
  's.updated_at',
];

const RUN_COLUMNS = [
  'id',
  'source_id',
  'source_name',
  'status',
  'added',
  'updated',
  'unchanged',
  'failed',
  'removed',
  'errors',
  'duration_ms',
  'started_at',
  'finished_at',
  'triggered_by',
];

/** A device of this organization a sync may touch: synced from the source, or holding a name NetBox lists. */
export interface SyncedDeviceRow extends NetboxOwnedFields {
  id: string;
  profile_id: string;
  source: string;
  source_id: string | null;
  external_id: string | null;
  netbox_removed_at: Date | null;
}

/** JSON columns go in as JSON text (an object or array bound as-is would become a PostgreSQL array). */
function encode(row: Record<string, unknown>): Record<string, unknown> {
  const out = { ...row };
  for (const key of ['device_filters', 'platform_map']) if (out[key] !== undefined) out[key] = JSON.stringify(out[key]);
  return out;
}

/** SQL for NetBox sources and sync runs; device writes of a sync go through DeviceStore. */
export class NetboxStore extends NamedOrgTable {
  constructor(db: Db) {
    super(db, 'netbox_sources');
  }

  async list(orgId: string) {
    const sources = await this.db('netbox_sources as s').where('s.org_id', orgId).orderBy('s.name').select(SOURCE_COLUMNS(this.db));
    return { sources, total: sources.length };
  }

  find(orgId: string, id: string) {
    return this.db('netbox_sources as s').where({ 's.org_id': orgId, 's.id': id }).first(SOURCE_COLUMNS(this.db));
  }

  /** The source with its sealed token, for a sync or a connection test only. */
  findForSync(orgId: string, id: string) {
    return this.db('netbox_sources').where({ org_id: orgId, id }).first();
  }

  override insert(row: Record<string, unknown>): Promise<string | undefined> {
    return super.insert(encode(row));
  }

  override update(orgId: string, id: string, fields: Record<string, unknown>): Promise<number> {
    return super.update(orgId, id, encode(fields));
  }

  /** Serializes syncs of one source across requests and controller replicas, until the transaction ends. */
  async lockSource(trx: Knex.Transaction, sourceId: string): Promise<void> {
    await trx.raw("SELECT pg_advisory_xact_lock(hashtext('netbox-sync:' || ?))", [sourceId]);
  }

  /** Devices synced from the source plus any device holding one of the names. */
  syncCandidates(trx: Knex.Transaction, orgId: string, sourceId: string, names: string[]): Promise<SyncedDeviceRow[]> {
    return trx('devices')
      .where('org_id', orgId)
      .andWhere((q) => q.where({ source: 'netbox', source_id: sourceId }).orWhereRaw('name = ANY(?::text[])', [names]))
      .select(
        'id',
        'profile_id',
        'name',
        'host',
        'device_type',
        'manufacturer',
        'model',
        'platform',
        'site',
        'serial_number',
        'asset_tag',
        'tags',
        'source',
        'source_id',
        'external_id',
        'netbox_removed_at',
      );
  }

  /** Stamps netbox_last_synced_at on the source's devices NetBox listed (updated_at is left alone). */
  async touchSeen(trx: Knex.Transaction, orgId: string, sourceId: string, seenIds: string[]): Promise<void> {
    await trx('devices')
      .where({ org_id: orgId, source: 'netbox', source_id: sourceId })
      .whereRaw('external_id = ANY(?::text[])', [seenIds])
      .update({ netbox_last_synced_at: trx.fn.now() });
  }

  /** Devices of the source NetBox no longer lists: marked (or deleted), counting only newly missing ones. */
  async removeMissing(trx: Knex.Transaction, orgId: string, sourceId: string, seenIds: string[], hardDelete: boolean): Promise<number> {
    const missing = trx('devices')
      .where({ org_id: orgId, source: 'netbox', source_id: sourceId })
      .whereRaw('NOT (external_id = ANY(?::text[]))', [seenIds]);
    if (hardDelete) return missing.delete();
    return missing.whereNull('netbox_removed_at').update({ netbox_removed_at: trx.fn.now(), updated_at: trx.fn.now() });
  }

  async recordRun(run: Record<string, unknown>, sourceId: string, orgId: string) {
    const [row] = await this.db('netbox_sync_runs')
      .insert({ ...run, errors: JSON.stringify(run.errors) })
      .returning(RUN_COLUMNS);
    await this.db('netbox_sources').where({ org_id: orgId, id: sourceId }).update({ last_sync_at: row.finished_at, last_sync_status: row.status });
    return row;
  }

  async history(orgId: string, sourceId: string | undefined, limit: number, offset: number) {
    const base = this.db('netbox_sync_runs')
      .where('org_id', orgId)
      .modify((q) => {
        if (sourceId) q.where('source_id', sourceId);
      });
    const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
    const history = await base.select(RUN_COLUMNS).orderBy('started_at', 'desc').limit(limit).offset(offset);
    return { history, total: Number(count) };
  }
}
