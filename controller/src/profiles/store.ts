import type { Db } from '../db/knex';
import { NamedOrgTable } from '../db/named-org-table';

/** Columns of a profile as returned by the API: secrets become has_* flags. */
const columns = (db: Db) => [
  'p.id',
  'p.org_id',
  'p.name',
  'p.username',
  db.raw('(p.password_enc IS NOT NULL) AS has_password'),
  db.raw('(p.private_key_enc IS NOT NULL) AS has_private_key'),
  db.raw('(p.enable_password_enc IS NOT NULL) AS has_enable_password'),
  'p.ssh_port',
  'p.netconf_port',
  'p.gnmi_port',
  'p.gnmi_tls',
  'p.gnmi_skip_verify',
  'p.automation_transport',
  'p.ca_certificate',
  db.raw('(SELECT count(*) FROM devices d WHERE d.profile_id = p.id)::int AS device_count'),
  'p.created_at',
  'p.updated_at',
];

/** SQL for connection profiles. Sealed secrets are written here and read only by credentials.ts. */
export class ProfileStore extends NamedOrgTable {
  constructor(db: Db) {
    super(db, 'connection_profiles');
  }

  async list(orgId: string) {
    const profiles = await this.db('connection_profiles as p').where('p.org_id', orgId).orderBy('p.name').select(columns(this.db));
    return { profiles, total: profiles.length };
  }

  find(orgId: string, id: string) {
    return this.db('connection_profiles as p').where({ 'p.org_id': orgId, 'p.id': id }).first(columns(this.db));
  }

  async deviceCount(orgId: string, id: string): Promise<number> {
    const [{ count }] = await this.db('devices').where({ org_id: orgId, profile_id: id }).count<{ count: number }[]>({ count: '*' });
    return Number(count);
  }

  /** Moves the caller's devices among deviceIds to the profile; other organizations' ids are ignored. */
  assign(orgId: string, profileId: string, deviceIds: string[], userId: string): Promise<number> {
    return this.db('devices')
      .where('org_id', orgId)
      .whereRaw('id = ANY(?::uuid[])', [deviceIds])
      .update({ profile_id: profileId, updated_by: userId, updated_at: this.db.fn.now() });
  }
}
