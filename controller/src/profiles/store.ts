import type { Knex } from 'knex';
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
  'p.allowed_networks',
  'p.ca_certificate',
  db.raw('(SELECT count(*) FROM devices d WHERE d.profile_id = p.id)::int AS device_count'),
  'p.created_at',
  'p.updated_at',
];

/** A profile that limits where its credentials go (allowed_networks not empty). */
export interface NetworkLimit {
  profile: string;
  allowed_networks: string[];
}

/** The limits of several profiles, by profile id (a profile that limits nothing is absent). */
export type NetworkLimits = ReadonlyMap<string, NetworkLimit>;

/**
 * The limits of the organization's profiles among ids, in one query: for a write of many devices
 * (a NetBox sync, in its transaction) as for one.
 */
export async function networkLimits(db: Knex, orgId: string, ids: string[]): Promise<NetworkLimits> {
  const rows: (NetworkLimit & { id: string })[] = await db('connection_profiles')
    .where('org_id', orgId)
    .whereRaw('id = ANY(?::uuid[])', [ids])
    .whereRaw("allowed_networks <> '{}'")
    .select('id', 'name as profile', 'allowed_networks');
  return new Map(rows.map(({ id, ...limit }) => [id, limit]));
}

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

  /** The profile's allowed_networks with its name; undefined when it limits nothing (or is not the organization's). */
  async limitOf(orgId: string, id: string): Promise<NetworkLimit | undefined> {
    return (await networkLimits(this.db, orgId, [id])).get(id);
  }

  /**
   * The organization's devices among ids whose profile limits where its credentials go, each with
   * that limit and its host: `change.profileId` (when given) is the profile they are moving to and
   * `change.host` (when given) the host they are getting.
   */
  limitedDevices(
    orgId: string,
    ids: string[],
    change: { profileId?: string; host?: string },
  ): Promise<(NetworkLimit & { name: string; host: string })[]> {
    return this.db('devices as d')
      .join('connection_profiles as p', (on) =>
        on.on('p.org_id', 'd.org_id').andOn(this.db.raw('p.id = COALESCE(?::uuid, d.profile_id)', [change.profileId ?? null])),
      )
      .where('d.org_id', orgId)
      .whereRaw('d.id = ANY(?::uuid[])', [ids])
      .whereRaw("p.allowed_networks <> '{}'")
      .orderBy('d.name')
      .select('d.name', this.db.raw('COALESCE(?::text, d.host) AS host', [change.host ?? null]), 'p.name as profile', 'p.allowed_networks');
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
