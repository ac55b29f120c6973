import type { AuditStore } from './audit-store';

export interface AuditEntry {
  kind: string;
  orgId?: string | null;
  userId?: string | null;
  username?: string | null;
  ip?: string | null;
  details?: Record<string, unknown>;
}

/** Who did it: a signed-in caller (the AuthContext of a request has these fields). */
export interface AuditActor {
  orgId: string;
  userId: string;
  username: string;
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

  /** An action of a signed-in caller, in the organization it acts in. */
  byActor(actor: AuditActor, kind: string, details: Record<string, unknown>, ip?: string): Promise<void> {
    return this.store.insert({ kind, orgId: actor.orgId, userId: actor.userId, username: actor.username, ip, details });
  }

  list(filter: AuditFilter): Promise<{ entries: any[]; total: number }> {
    return this.store.list(filter);
  }
}
