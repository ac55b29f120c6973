import type { Knex } from 'knex';
import { PREPARED, type Db } from '../db/knex';
import type { PublicJwk } from '../../../shared/src/jobs/crypto';
import type { HeartbeatHealth } from '../../../shared/src/jobs/messages';
import type { AgentDirectory, AgentIdentityRow, HeartbeatFields } from '../jobs/ports';
export type { AgentIdentityRow, HeartbeatFields } from '../jobs/ports';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';

export interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  site_id: string | null;
  builtin: boolean;
  enrolled_at: Date | null;
  enrollment_expires_at: Date | null;
  public_key: PublicJwk | null;
  revoked_at: Date | null;
  version: string;
  capabilities: string[];
  last_seen_at: Date | null;
  active_jobs: number;
  max_jobs: number;
  pending_events: number;
  completed_jobs: number;
  failed_jobs: number;
  /** The agent's last report on its NATS and controller connections (null before the first). */
  health: HeartbeatHealth | null;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'org_id',
  'name',
  'site_id',
  'builtin',
  'enrolled_at',
  'enrollment_expires_at',
  'public_key',
  'revoked_at',
  'version',
  'capabilities',
  'last_seen_at',
  'active_jobs',
  'max_jobs',
  'pending_events',
  'completed_jobs',
  'failed_jobs',
  'health',
  'created_at',
];

/** The only place with agent SQL; the job engine sees it as its AgentDirectory. */
export class AgentsStore implements AgentDirectory {
  constructor(private readonly db: Db) {}

  async findSite(orgId: string, siteId: string): Promise<{ id: string; name: string } | undefined> {
    return this.db('sites').where({ org_id: orgId, id: siteId }).first('id', 'name');
  }

  async siteNames(siteIds: string[], q: Knex = this.db): Promise<Map<string, string>> {
    if (siteIds.length === 0) return new Map();
    const rows: { id: string; name: string }[] = await q('sites').whereIn('id', siteIds).select('id', 'name');
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Inserts a new agent awaiting enrollment; undefined when the name is taken. */
  async create(
    orgId: string,
    fields: { name: string; site_id: string | null; created_by: string | null },
    tokenHash: string,
    expiresAt: Date,
  ): Promise<AgentRow | undefined> {
    const rows = await this.db('agents')
      .insert({ org_id: orgId, ...fields, enrollment_token_hash: tokenHash, enrollment_expires_at: expiresAt })
      .onConflict(this.db.raw('(org_id, lower(name)) WHERE revoked_at IS NULL'))
      .ignore()
      .returning(COLUMNS);
    return rows[0];
  }

  async list(orgId: string, siteId?: string | null): Promise<AgentRow[]> {
    const q = this.db('agents')
      .where({ org_id: orgId })
      .whereNull('revoked_at')
      .select(COLUMNS)
      .orderBy([{ column: 'name' }, { column: 'id' }]);
    if (siteId !== undefined) q.where(siteId === null ? { site_id: null } : { site_id: siteId });
    return q;
  }

  async find(orgId: string, id: string): Promise<AgentRow | undefined> {
    return this.db('agents').where({ org_id: orgId, id }).whereNull('revoked_at').first(COLUMNS);
  }

  /** Revokes; a revoked agent no longer holds its site (the site can be deleted). Answers the row as it was. */
  async revoke(orgId: string, id: string): Promise<AgentRow | undefined> {
    return this.db.transaction(async (trx) => {
      const before: AgentRow | undefined = await trx('agents').where({ org_id: orgId, id }).whereNull('revoked_at').forUpdate().first(COLUMNS);
      if (!before) return undefined;
      await trx('agents').where({ id }).update({ revoked_at: trx.fn.now(), enrollment_token_hash: null, site_id: null, updated_at: trx.fn.now() });
      return before;
    });
  }

  /** Redeems a token: single use (cleared in the same statement), refused once expired or revoked. */
  async enroll(
    tokenHash: string,
    publicKey: PublicJwk,
    version: string,
    capabilities: string[],
    natsPublicKey: string | null = null,
  ): Promise<AgentRow | undefined> {
    const rows = await this.db('agents')
      .where({ enrollment_token_hash: tokenHash })
      .whereNull('revoked_at')
      .whereNull('enrolled_at')
      .where('enrollment_expires_at', '>', this.db.fn.now())
      .update({
        enrollment_token_hash: null,
        enrolled_at: this.db.fn.now(),
        public_key: JSON.stringify(publicKey),
        nats_public_key: natsPublicKey,
        version,
        capabilities: JSON.stringify(capabilities),
        updated_at: this.db.fn.now(),
      })
      .returning(COLUMNS);
    return rows[0];
  }

  /** The agent a still-valid enrollment token belongs to. */
  async pendingByToken(tokenHash: string): Promise<{ org_id: string; site_id: string | null } | undefined> {
    return this.db('agents').where({ enrollment_token_hash: tokenHash }).whereNull('revoked_at').whereNull('enrolled_at').first('org_id', 'site_id');
  }

  /** A live agent's NATS user key (operator mode), to sign it fresh credentials. */
  async natsKey(
    id: string,
  ): Promise<{ id: string; org_id: string; name: string; site_id: string | null; nats_public_key: string | null } | undefined> {
    return this.db('agents').where({ id }).whereNull('revoked_at').first('id', 'org_id', 'name', 'site_id', 'nats_public_key');
  }

  /**
   * NATS keys of agents revoked since `since`, across organizations: they all live in the one
   * application account whose revocation list NATS enforces. Older ones need no entry, as their
   * last credentials have expired.
   */
  async revokedNatsKeys(since: Date): Promise<{ nats_public_key: string; revoked_at: Date }[]> {
    return this.db('agents').whereNotNull('nats_public_key').where('revoked_at', '>', since).select('nats_public_key', 'revoked_at');
  }

  /** Spends a token that failed for another reason (e.g. a bad key) so it cannot be retried forever. */
  async tokenExists(tokenHash: string): Promise<boolean> {
    return Boolean(await this.db('agents').where({ enrollment_token_hash: tokenHash }).first('id'));
  }

  /** The installation's built-in agent (`npm start`), created or re-keyed in the default organization. */
  async upsertBuiltin(orgId: string, id: string | null, publicKey: PublicJwk, version: string, capabilities: string[]): Promise<AgentRow> {
    return this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['switchboard.builtin-agent']);
      const existing: AgentRow | undefined = id ? await trx('agents').where({ id, builtin: true }).whereNull('revoked_at').first(COLUMNS) : undefined;
      const fields = { public_key: JSON.stringify(publicKey), version, capabilities: JSON.stringify(capabilities), updated_at: trx.fn.now() };
      if (existing) return (await trx('agents').where({ id: existing.id }).update(fields).returning(COLUMNS))[0];
      const taken = await trx('agents').where({ org_id: orgId }).whereNull('revoked_at').whereRaw('lower(name) = ?', ['built-in']).first('id');
      const name = taken ? `built-in ${new Date().toISOString().slice(0, 19)}` : 'built-in';
      const [row] = await trx('agents')
        .insert({ org_id: orgId, name, site_id: null, builtin: true, enrolled_at: trx.fn.now(), ...fields })
        .returning(COLUMNS);
      return row;
    });
  }

  /** Fresh rows (revocation included) for the agents that signed a batch of events. */
  async identities(ids: string[], trx: Knex = this.db): Promise<Map<string, AgentIdentityRow>> {
    if (ids.length === 0) return new Map();
    const rows: AgentIdentityRow[] = await trx('agents')
      .whereRaw('id = ANY(?::uuid[])', [ids])
      .select('id', 'org_id', 'name', 'site_id', 'public_key', 'revoked_at', 'last_seen_at')
      .options(PREPARED);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Records a heartbeat signed at `at`, only when that is later than the last one recorded (null
   * otherwise), in one statement so that two replicas cannot both take a copy; answers when the
   * agent was last seen before it (null: never), to tell an agent coming online.
   */
  async heartbeat(id: string, at: Date, fields: HeartbeatFields): Promise<{ previousSeenAt: Date | null } | null> {
    // A sub-select in RETURNING reads the row as it was before this statement changed it.
    const [row]: { previous_seen_at: Date | null }[] = await this.db('agents')
      .where({ id })
      .andWhere((q) => q.whereNull('last_beat_at').orWhere('last_beat_at', '<', at))
      .update({
        ...fields,
        capabilities: JSON.stringify(fields.capabilities),
        ...(fields.health !== undefined ? { health: fields.health === null ? null : JSON.stringify(fields.health) } : {}),
        last_seen_at: this.db.fn.now(),
        last_beat_at: at,
      })
      .returning(this.db.raw('(SELECT last_seen_at FROM agents p WHERE p.id = agents.id) AS previous_seen_at') as never);
    return row ? { previousSeenAt: row.previous_seen_at } : null;
  }

  async addJobCounts(agentId: string, completed: number, failed: number): Promise<void> {
    await this.db('agents')
      .where({ id: agentId })
      .update({ completed_jobs: this.db.raw('completed_jobs + ?', [completed]), failed_jobs: this.db.raw('failed_jobs + ?', [failed]) });
  }

  /** Sites (of the given ones) that have at least one live agent: their devices use the site's pool. */
  async sitesWithAgents(siteIds: string[], q: Knex = this.db): Promise<Set<string>> {
    if (siteIds.length === 0) return new Set();
    const rows: { site_id: string }[] = await q('agents').whereRaw('site_id = ANY(?::uuid[])', [siteIds]).whereNull('revoked_at').distinct('site_id');
    return new Set(rows.map((r) => r.site_id));
  }

  /** Live, enrolled agents of one pool: the recipients of its jobs' secrets. */
  async poolMembers(orgId: string, pool: string, q: Knex = this.db): Promise<AgentIdentityRow[]> {
    return q('agents')
      .where({ org_id: orgId })
      .where(pool === DEFAULT_POOL ? { site_id: null } : { site_id: pool })
      .whereNull('revoked_at')
      .select('id', 'org_id', 'name', 'site_id', 'public_key', 'revoked_at', 'last_seen_at', 'capabilities')
      .orderBy('id');
  }

  async agentName(id: string, q: Knex = this.db): Promise<{ name: string; last_seen_at: Date | null } | undefined> {
    return q('agents').where({ id }).first('name', 'last_seen_at');
  }

  /**
   * Device reachability of a site from each device's latest finished job in the window:
   * succeeded = reachable, failed = unreachable (with the reason), none = unknown.
   */
  async siteDevices(
    orgId: string,
    siteId: string,
    since: Date,
  ): Promise<{ id: string; name: string; status: string | null; error: string | null; finished_at: Date | null; kind: string | null }[]> {
    // device_health (migration 184) holds each device's latest finished job: one join, no probe of jobs per device.
    const result = await this.db.raw(
      `SELECT d.id, d.name, h.job_status AS status, h.job_error AS error, h.job_finished_at AS finished_at, h.job_kind AS kind
         FROM devices d
         LEFT JOIN device_health h ON h.org_id = d.org_id AND h.device_id = d.id AND h.job_finished_at >= ?
        WHERE d.org_id = ? AND d.site_id = ?
        ORDER BY d.name`,
      [since, orgId, siteId],
    );
    return result.rows;
  }
}
