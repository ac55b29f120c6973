import type { Db } from '../db/knex';

/** What an agent status event needs about one agent. */
export interface AgentLiveRow {
  id: string;
  org_id: string;
  name: string;
  site_id: string | null;
  last_seen_at: Date | null;
  pending_events: number;
  revoked_at: Date | null;
}

/** Revoked agents stay in view this long, so watchers hear the revocation once. */
const REVOKED_WINDOW_SECONDS = 120;

/** The only SQL of the agent watch: the agents of the watched organizations. */
export class AgentLiveStore {
  constructor(private readonly db: Db) {}

  async agents(orgIds: string[]): Promise<AgentLiveRow[]> {
    return this.db('agents')
      .whereRaw('org_id = ANY(?::uuid[])', [orgIds])
      .where((q) => q.whereNull('revoked_at').orWhereRaw(`revoked_at > now() - interval '${REVOKED_WINDOW_SECONDS} seconds'`))
      .select('id', 'org_id', 'name', 'site_id', 'last_seen_at', 'pending_events', 'revoked_at');
  }
}
