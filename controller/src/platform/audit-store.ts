import type { Db } from '../db/knex';
import type { AuditEntry, AuditFilter } from './audit-service';

/** SQL for the append-only audit_log table. */
export class AuditStore {
  constructor(private readonly db: Db) {}

  async insert(entry: AuditEntry): Promise<void> {
    await this.db('audit_log').insert({
      kind: entry.kind,
      org_id: entry.orgId ?? null,
      user_id: entry.userId ?? null,
      username: entry.username ?? null,
      ip_address: entry.ip ?? null,
      details: JSON.stringify(entry.details ?? {}),
    });
  }

  async list(filter: AuditFilter): Promise<{ entries: any[]; total: number }> {
    const query = this.db('audit_log').modify((q) => {
      if (filter.orgId) q.where('org_id', filter.orgId);
      if (filter.kind) q.where('kind', filter.kind);
      if (filter.user_id) q.where('user_id', filter.user_id);
      if (filter.since) q.where('created_at', '>=', filter.since);
      if (filter.until) q.where('created_at', '<', filter.until);
    });
    const [{ count }] = await query.clone().count<{ count: number }[]>({ count: '*' });
    const entries = await query
      .select('id', 'org_id', 'user_id', 'username', 'kind', 'ip_address', 'details', 'created_at')
      .orderBy('seq', 'desc')
      .limit(filter.limit)
      .offset(filter.offset);
    return { entries, total: Number(count) };
  }
}
