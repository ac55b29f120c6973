import type { Knex } from 'knex';
import { hotQuery, PREPARED, type Db } from '../db/knex';
import { orderBySql, type ListOrder } from './list-order';
import { NamedOrgTable } from '../db/named-org-table';

/** A timestamp column as the ISO text JSON answers carry (built inside PostgreSQL, so no Date round trip). */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export const SUMMARY_COLUMNS = [
  'id',
  'org_id',
  'name',
  'host',
  'device_type',
  'manufacturer',
  'model',
  'site',
  'source',
  'profile_id',
  'created_at',
  'updated_at',
];

const fullColumns = (db: Db) => [
  ...SUMMARY_COLUMNS,
  'protocol',
  'description',
  'platform',
  'serial_number',
  'asset_tag',
  'tags',
  'metadata',
  'site_id',
  'poll_enabled',
  'poll_interval_minutes',
  db.raw("CASE WHEN source = 'netbox' THEN source_id END AS netbox_source_id"),
  db.raw("CASE WHEN source = 'netbox' AND external_id ~ '^[0-9]{1,9}$' THEN external_id::int END AS netbox_id"),
  'netbox_last_synced_at',
  'netbox_removed_at',
  'created_by',
  'updated_by',
  db.raw(`CASE WHEN ssh_host_key_sha256 IS NOT NULL THEN json_build_object(
      'type', ssh_host_key_type, 'fingerprint', ssh_host_key_sha256,
      'seen_at', ${isoText('ssh_host_key_seen_at')}) END AS ssh_host_key`),
  db.raw(`CASE WHEN gnmi_cert_sha256 IS NOT NULL THEN json_build_object(
      'sha256', gnmi_cert_sha256, 'subject', COALESCE(gnmi_cert_subject, ''),
      'not_after', ${isoText('gnmi_cert_not_after')}, 'seen_at', ${isoText('gnmi_cert_seen_at')}) END AS gnmi_certificate`),
];

/** The device's trust-on-first-use pins and their columns, fingerprint first (migrations 120, 130). */
const PIN_COLUMNS = {
  ssh_host_key: ['ssh_host_key_sha256', 'ssh_host_key_type', 'ssh_host_key_seen_at'],
  gnmi_certificate: ['gnmi_cert_sha256', 'gnmi_cert_subject', 'gnmi_cert_not_after', 'gnmi_cert_seen_at'],
} as const;
export type DevicePin = keyof typeof PIN_COLUMNS;

export interface DeviceFilter {
  q?: string;
  vendor?: string;
  platform?: string;
  device_type?: string;
  site_id?: string;
  site?: string;
  source?: string;
}

/** PostgreSQL type of each device column a batch write may carry (jsonb_to_recordset column list). */
export const DEVICE_COLUMN_TYPES: Record<string, string> = {
  id: 'uuid',
  org_id: 'uuid',
  profile_id: 'uuid',
  site_id: 'uuid',
  source_id: 'uuid',
  created_by: 'uuid',
  updated_by: 'uuid',
  name: 'text',
  host: 'text',
  device_type: 'text',
  manufacturer: 'text',
  model: 'text',
  platform: 'text',
  site: 'text',
  source: 'text',
  external_id: 'text',
  protocol: 'text',
  description: 'text',
  serial_number: 'text',
  asset_tag: 'text',
  tags: 'text[]',
  metadata: 'jsonb',
  poll_enabled: 'boolean',
  poll_interval_minutes: 'integer',
  netbox_last_synced_at: 'timestamptz',
  netbox_removed_at: 'timestamptz',
};

/** Bulk writes of at least this many rows get afterBulkWrite's index flush. */
const BULK_WRITE_ROWS = 100;

/**
 * The organization's device list version (migration 110); 0 before its first device. Also read
 * along with the session check of GET /api/devices (config.alongSession), saving a round trip.
 */
export const LIST_VERSION = 'COALESCE((SELECT version FROM device_counts WHERE org_id = ?), 0)';
const LIST_VERSION_SQL = `SELECT ${LIST_VERSION} AS version`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `jsonb_to_recordset(?) AS r(col type, …)` for a batch of rows that all carry `columns`. */
function recordset(db: Db | Knex.Transaction, columns: string[], rows: Record<string, unknown>[]): Knex.Raw {
  const definition = columns.map((c) => `${c} ${DEVICE_COLUMN_TYPES[c]}`).join(', ');
  return db.raw(`jsonb_to_recordset(?::jsonb) AS r(${definition})`, [JSON.stringify(rows)]);
}

/** SQL for devices: the only place that reads or writes the devices table for this area. */
export class DeviceStore extends NamedOrgTable {
  constructor(db: Db) {
    super(db, 'devices');
  }

  /** Empty filter values (a form's blank fields) filter nothing. */
  private filtered(orgId: string, filter: DeviceFilter) {
    const f = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined && value !== '')) as DeviceFilter;
    return this.db('devices')
      .where('org_id', orgId)
      .modify((query) => {
        // search_text: lower(name host manufacturer model platform device_type), trigram-indexed (migration 021).
        if (f.q !== undefined) query.whereRaw('search_text LIKE ?', [`%${escapeLike(f.q.toLowerCase())}%`]);
        if (f.vendor !== undefined) query.whereRaw('lower(manufacturer) = lower(?)', [f.vendor]);
        if (f.platform !== undefined) query.where('platform', f.platform);
        if (f.device_type !== undefined) query.where('device_type', f.device_type);
        if (f.site_id !== undefined) query.where('site_id', f.site_id);
        if (f.site !== undefined) query.whereRaw('lower(site) = lower(?)', [f.site]);
        if (f.source !== undefined) query.where('source', f.source);
      });
  }

  /**
   * GET /api/devices in one round trip, as the JSON text of {devices, total, limit, offset}
   * built by PostgreSQL: the hot list path skips row decoding, Date objects and re-serialization.
   * Timestamps are written like Date.toISOString() (UTC, milliseconds, Z), as on every other route.
   * Also the organization's list version (migration 110), read in the same statement and so from
   * the same snapshot as the body: the pair is what DeviceListCache keeps.
   */
  async listJson(orgId: string, filter: DeviceFilter, order: ListOrder, limit: number, offset: number): Promise<{ body: string; version: number }> {
    // Unfiltered: the trigger-maintained per-organization count (migration 022), not a scan.
    const unfiltered = Object.values(filter).every((value) => value === undefined || value === '');
    const count = unfiltered
      ? this.db.raw('SELECT COALESCE((SELECT devices FROM device_counts WHERE org_id = ?), 0)', [orgId])
      : this.filtered(orgId, filter).count('*');
    const iso = (column: string) => this.db.raw(`${isoText(column)} AS ${column}`);
    const columns = SUMMARY_COLUMNS.map((c) => (c === 'created_at' || c === 'updated_at' ? iso(c) : c));
    const page = this.filtered(orgId, filter).select(columns).orderByRaw(orderBySql(order)).limit(limit).offset(offset);
    const { rows } = await this.db
      .raw(
        `SELECT json_build_object(
         'devices', COALESCE((SELECT json_agg(p ORDER BY ${orderBySql(order, 'p.')}) FROM (?) p), '[]'::json),
         'total', (?), 'limit', ?::int, 'offset', ?::int)::text AS body,
       ${LIST_VERSION} AS version`,
        [page, count, limit, offset, orgId],
      )
      .options(PREPARED); // one text per combination of filters present and order
    return rows[0];
  }

  /** The organization's current list version (0 before its first device); one index lookup. */
  async listVersion(orgId: string): Promise<number> {
    const [row] = await hotQuery<{ version: number }>(this.db, LIST_VERSION_SQL, [orgId]);
    return row.version;
  }

  find(orgId: string, id: string) {
    return this.db('devices').where({ org_id: orgId, id }).first(fullColumns(this.db));
  }

  /**
   * Clears one of the device's trust-on-first-use pins (its SSH host key or its gNMI TLS
   * certificate), so the next session learns it again. Answers whether the device exists in the
   * organization (a device with no pin is no error) and the fingerprint cleared.
   */
  async clearPin(orgId: string, id: string, pin: DevicePin): Promise<{ found: boolean; cleared: string | null }> {
    const [fingerprint, ...rest] = PIN_COLUMNS[pin];
    const { rows } = await this.db.raw(
      `UPDATE devices d SET ${[fingerprint, ...rest].map((c) => `${c} = NULL`).join(', ')}
         FROM (SELECT id, ${fingerprint} AS previous FROM devices WHERE org_id = ? AND id = ? FOR UPDATE) p
        WHERE d.id = p.id RETURNING p.previous`,
      [orgId, id],
    );
    return rows.length === 0 ? { found: false, cleared: null } : { found: true, cleared: rows[0].previous };
  }

  /** Whether the profile and the site (each when given) belong to the organization, in one query. */
  async references(orgId: string, refs: { profile_id?: string; site_id?: string | null }): Promise<{ profile: boolean; site: boolean }> {
    const { rows } = await this.db.raw(
      `SELECT (?::uuid IS NULL OR EXISTS (SELECT 1 FROM connection_profiles WHERE org_id = ? AND id = ?::uuid)) AS profile,
              (?::uuid IS NULL OR EXISTS (SELECT 1 FROM sites WHERE org_id = ? AND id = ?::uuid)) AS site`,
      [refs.profile_id ?? null, orgId, refs.profile_id ?? null, refs.site_id ?? null, orgId, refs.site_id ?? null],
    );
    return rows[0];
  }

  /** Sets the same fields on the organization's devices among ids; other ids are ignored. */
  bulkUpdate(orgId: string, ids: string[], fields: Record<string, unknown>): Promise<number> {
    return this.db('devices')
      .where('org_id', orgId)
      .whereRaw('id = ANY(?::uuid[])', [ids])
      .update({ ...fields, updated_at: this.db.fn.now() });
  }

  /**
   * Inserts rows (each with every key of `columns`) in one statement per chunk, skipping names
   * that already exist in the organization. Returns the rows written (id, name).
   */
  async insertMany(
    trx: Knex.Transaction | Db,
    columns: string[],
    rows: Record<string, unknown>[],
    chunk = 5000,
  ): Promise<{ id: string; name: string }[]> {
    const written: { id: string; name: string }[] = [];
    for (let i = 0; i < rows.length; i += chunk) {
      const { rows: inserted } = await trx.raw(
        `INSERT INTO devices (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM ? ON CONFLICT (org_id, name) DO NOTHING RETURNING id, name`,
        [recordset(trx, columns, rows.slice(i, i + chunk))],
      );
      written.push(...inserted);
    }
    return written;
  }

  /** Updates rows keyed by id (each with every key of `columns`, id among them) inside one organization. */
  async updateMany(trx: Knex.Transaction | Db, orgId: string, columns: string[], rows: Record<string, unknown>[], chunk = 5000): Promise<number> {
    const set = columns
      .filter((c) => c !== 'id')
      .map((c) => `${c} = r.${c}`)
      .join(', ');
    let updated = 0;
    for (let i = 0; i < rows.length; i += chunk) {
      const result = await trx.raw(`UPDATE devices d SET ${set}, updated_at = now() FROM ? WHERE d.id = r.id AND d.org_id = ?`, [
        recordset(trx, columns, rows.slice(i, i + chunk)),
        orgId,
      ]);
      updated += result.rowCount ?? 0;
    }
    return updated;
  }

  /**
   * After a bulk write of `rows` devices, so the next list is fast at once rather than after
   * autovacuum: moves the trigram index's pending list (GIN fastupdate) into the index (else q
   * scans every pending entry), and from 1,000 rows that are over a fifth of the table refreshes
   * the planner's statistics (else a table that grew from a few rows to thousands is planned as
   * if tiny). Best effort: PGlite
   * without pg_trgm has no index to flush.
   */
  async afterBulkWrite(rows: number): Promise<void> {
    if (rows < BULK_WRITE_ROWS) return;
    await this.db
      .raw("SELECT gin_clean_pending_list(c.oid) FROM pg_class c WHERE c.relname = 'devices_search_text_trgm' AND c.relkind = 'i'")
      .catch(() => undefined);
    if (rows < 1000) return;
    // Only when the write is a large part of the table (stats more than a fifth out of date).
    const { rows: stats } = await this.db.raw("SELECT reltuples FROM pg_class WHERE relname = 'devices' AND relkind = 'r'");
    if (rows > Math.max(0, Number(stats[0]?.reltuples ?? 0)) * 0.2) await this.db.raw('ANALYZE devices').catch(() => undefined);
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
