import { createHash, randomBytes } from 'node:crypto';
import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import { normalizePublicKey, type PublicJwk } from '../../../shared/src/jobs/crypto';
import { poolOf } from '../../../shared/src/nats/subjects';
import type { AgentRow, AgentsStore } from './store';
import { agentInbox } from '../../../shared/src/nats/subjects';
import { isUserNkey } from '../platform/nats-authority';
import type { AgentNatsCredentials } from './nats-credentials';
import { isOffline, type Liveness } from '../jobs/ports';

export type AgentStatus = 'online' | 'offline' | 'degraded';

export type { Liveness } from '../jobs/ports';

/**
 * Online while beats arrive; degraded after two missed beats or while the agent holds events
 * it could not publish; offline after agents.offline_after_seconds without a beat.
 */
export function statusOf(row: Pick<AgentRow, 'last_seen_at' | 'pending_events' | 'revoked_at'>, live: Liveness, now = Date.now()): AgentStatus {
  if (isOffline(row, live, now) || !row.last_seen_at) return 'offline';
  if (now - row.last_seen_at.getTime() > 2 * live.heartbeatMs || row.pending_events > 0) return 'degraded';
  return 'online';
}

export type PoolStatus = 'ok' | 'degraded' | 'down' | 'no_agents';

/** A pool's status from its agents (degraded ones count as up) and its devices failing. */
export function poolStatus(agents: { status: AgentStatus }[], failing: number): PoolStatus {
  if (agents.length === 0) return 'no_agents';
  const up = agents.filter((a) => a.status !== 'offline').length;
  if (up === 0) return 'down';
  return up < agents.length || failing > 0 ? 'degraded' : 'ok';
}

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** What the job machinery tells an agent at enrollment (NATS names, its key, ack wait). */
export interface EnrollmentDetails {
  controllerKey: Record<string, unknown>;
  nats(
    orgId: string,
    agentId: string,
    pool: string,
  ): {
    prefix: string;
    jobs_stream: string;
    jobs_subject: string;
    jobs_consumer: string;
    results_stream: string;
    results_subject: string;
    heartbeat_subject: string;
    ack_wait_ms: number;
  };
}

export class AgentsService {
  constructor(
    private readonly store: AgentsStore,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    private readonly details: EnrollmentDetails,
    /** Operator mode only: agents' NATS credentials. */
    private readonly natsCredentials: AgentNatsCredentials | null = null,
  ) {}

  async liveness(): Promise<Liveness> {
    const [hb, offline] = await Promise.all([
      this.settings.get<number>('agents.heartbeat_seconds'),
      this.settings.get<number>('agents.offline_after_seconds'),
    ]);
    return { heartbeatMs: hb * 1000, offlineMs: offline * 1000 };
  }

  view(row: AgentRow, live: Liveness) {
    return {
      id: row.id,
      name: row.name,
      site_id: row.site_id,
      pool: poolOf(row.site_id),
      status: statusOf(row, live),
      last_seen_at: row.last_seen_at,
      version: row.version,
      active_jobs: row.active_jobs,
      max_jobs: row.max_jobs,
      completed_jobs: row.completed_jobs,
      failed_jobs: row.failed_jobs,
      capabilities: row.capabilities,
      health: row.health ?? null,
      enrolled: row.enrolled_at !== null,
      enrolled_at: row.enrolled_at,
      builtin: row.builtin,
      created_at: row.created_at,
    };
  }

  async list(orgId: string) {
    const [rows, live] = await Promise.all([this.store.list(orgId), this.liveness()]);
    return rows.map((row) => this.view(row, live));
  }

  async create(me: AuthContext, body: { name: string; site_id: string | null }) {
    if (body.site_id && !(await this.store.findSite(me.orgId, body.site_id))) throw appError('UNKNOWN_SITE');
    const minutes = await this.settings.get<number>('agents.enrollment_token_minutes', me.orgId);
    const token = `sbe_${randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + minutes * 60_000);
    const row = await this.store.create(
      me.orgId,
      { name: body.name.trim(), site_id: body.site_id, created_by: me.userId },
      hashToken(token),
      expiresAt,
    );
    if (!row) throw appError('AGENT_NAME_TAKEN', `An agent named '${body.name.trim()}' already exists in this organization`);
    await this.audit.byActor(me, 'agents.created', { agent_id: row.id, name: row.name, site_id: row.site_id });
    return { ...this.view(row, await this.liveness()), enrollment_token: token, enrollment_expires_at: expiresAt };
  }

  async revoke(me: AuthContext, id: string): Promise<void> {
    const row = await this.store.revoke(me.orgId, id);
    if (!row) throw appError('AGENT_NOT_FOUND');
    // The agent's NATS connection goes now (operator mode), not when its credentials expire.
    await this.natsCredentials?.revoked();
    await this.audit.byActor(me, 'agents.revoked', { agent_id: row.id, name: row.name, site_id: row.site_id });
  }

  async enroll(body: { token: string; public_key: unknown; nats_public_key?: string; version: string; capabilities: string[] }) {
    const tokenHash = hashToken(body.token);
    const natsKey = body.nats_public_key ?? null;
    if ((this.natsCredentials || natsKey !== null) && !isUserNkey(natsKey)) throw appError('AGENT_NATS_KEY_INVALID');
    let publicKey: PublicJwk;
    try {
      publicKey = await normalizePublicKey(body.public_key);
    } catch (err) {
      throw appError('AGENT_PUBLIC_KEY_INVALID', (err as Error).message);
    }
    await this.preparePool(tokenHash);
    const row = await this.store.enroll(tokenHash, publicKey, body.version, body.capabilities, natsKey);
    if (!row) throw appError('ENROLLMENT_TOKEN_INVALID');
    await this.audit.record({ kind: 'agents.enrolled', orgId: row.org_id, details: { agent_id: row.id, name: row.name, version: row.version } });
    return this.enrollment(row, natsKey);
  }

  /**
   * Operator mode: the agent's pool consumer before its token is spent (agents may not create it),
   * so a NATS outage leaves the token usable for another try.
   */
  private async preparePool(tokenHash: string): Promise<void> {
    const pending = this.natsCredentials ? await this.store.pendingByToken(tokenHash) : undefined;
    if (!pending) return;
    try {
      await this.natsCredentials!.preparePool(pending.org_id, poolOf(pending.site_id));
    } catch (err) {
      throw appError(
        'SERVICE_UNAVAILABLE',
        `NATS is not reachable (${(err as Error).message}); the enrollment token is still valid, try again shortly`,
      );
    }
  }

  /** The enrollment answer; also what the built-in agent gets without HTTP. */
  async enrollment(row: AgentRow, natsKey: string | null = null) {
    const pool = poolOf(row.site_id);
    const credentials = this.natsCredentials && natsKey ? await this.natsCredentials.issue({ ...row, nats_public_key: natsKey }) : {};
    return {
      agent_id: row.id,
      org_id: row.org_id,
      name: row.name,
      site_id: row.site_id,
      pool,
      heartbeat_interval_ms: (await this.liveness()).heartbeatMs,
      controller_key: this.details.controllerKey,
      nats: { ...this.details.nats(row.org_id, row.id, pool), inbox_prefix: agentInbox(row.id), ...credentials },
    };
  }

  async siteHealth(orgId: string, siteId: string) {
    const site = await this.store.findSite(orgId, siteId);
    if (!site) throw appError('SITE_NOT_FOUND');
    const since = new Date(Date.now() - 24 * 3600_000);
    const [rows, live, devices] = await Promise.all([this.store.list(orgId, siteId), this.liveness(), this.store.siteDevices(orgId, siteId, since)]);
    const agents = rows.map((row) => this.view(row, live));
    const online = agents.filter((a) => a.status !== 'offline').length;
    const reachable = devices.filter((d) => d.status === 'succeeded').length;
    const failed = devices.filter((d) => d.status === 'failed');
    return {
      site_id: site.id,
      name: site.name,
      pool: agents.length > 0 ? site.id : 'default',
      status: poolStatus(agents, failed.length),
      agents,
      online_agents: online,
      devices: { total: devices.length, reachable, unreachable: failed.length, unknown: devices.length - reachable - failed.length },
      unreachable_devices: failed
        .slice(0, 100)
        .map((d) => ({ id: d.id, name: d.name, error: d.error, kind: d.kind ?? '', at: d.finished_at as Date })),
    };
  }
}
