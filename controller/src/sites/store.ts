import type { Db } from '../db/knex';
import { NamedOrgTable } from '../db/named-org-table';

// d.org_id lets the count use the devices (org_id, site_id) index as an exact probe.
const columns = (db: Db) => [
  's.id',
  's.org_id',
  's.name',
  's.description',
  's.location',
  's.parent_site_id',
  db.raw('(SELECT count(*) FROM devices d WHERE d.org_id = s.org_id AND d.site_id = s.id)::int AS device_count'),
  db.raw('(SELECT count(*) FROM sites c WHERE c.parent_site_id = s.id)::int AS child_count'),
  's.created_at',
  's.updated_at',
];

/** SQL for sites. */
export class SiteStore extends NamedOrgTable {
  constructor(db: Db) {
    super(db, 'sites');
  }

  async list(orgId: string) {
    const sites = await this.db('sites as s').where('s.org_id', orgId).orderBy('s.name').select(columns(this.db));
    return { sites, total: sites.length };
  }

  find(orgId: string, id: string) {
    return this.db('sites as s').where({ 's.org_id': orgId, 's.id': id }).first(columns(this.db));
  }

  /** Whether walking up the parents from `startId` (itself included) reaches `siteId`. */
  async chainIncludes(startId: string, siteId: string): Promise<boolean> {
    const { rows } = await this.db.raw(
      `WITH RECURSIVE up(id, parent_site_id) AS (
         SELECT id, parent_site_id FROM sites WHERE id = ?
         UNION SELECT s.id, s.parent_site_id FROM sites s JOIN up ON s.id = up.parent_site_id
       ) SELECT 1 FROM up WHERE id = ? LIMIT 1`,
      [startId, siteId],
    );
    return rows.length > 0;
  }
}
