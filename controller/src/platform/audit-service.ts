import type { AuditStore } from './audit-store';

export interface AuditEntry {
  kind: string;
  orgId?: string | null;
  userId?: string | null;
  username?: string | null;
  ip?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditFilter {
  orgId: string | null;
  kind?: string;
  user_id?: string;
  since?: string | Date;
  until?: string | Date;
  limit: number;
  offset: number;
}

/** Append-only audit log; never holds secrets (callers pass ids and names, not credentials). */
export class AuditService {
  constructor(private readonly store: AuditStore) {}

  record(entry: AuditEntry): Promise<void> {
    return this.store.insert(entry);
  }

  list(filter: AuditFilter): Promise<{ entries: any[]; total: number }> {
    return this.store.list(filter);
  }
}
