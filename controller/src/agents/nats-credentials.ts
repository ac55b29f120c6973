import type { Logger } from 'pino';
import { NatsCredentialsRequest, PROTOCOL_VERSION, checkMessage, type NatsCredentialsReply } from '../../../shared/src/jobs/messages';
import { poolOf, type NatsNames } from '../../../shared/src/nats/subjects';
import type { NatsAuthority } from '../platform/nats-authority';
import type { AgentsStore } from './store';

type Grantee = { id: string; org_id: string; name: string; site_id: string | null; nats_public_key: string | null };

/** A failed account push is tried again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/**
 * Agent NATS credentials in operator mode: issued at enrollment, renewed on the agent's signed
 * request, revoked through the account's revocation list.
 */
export class AgentNatsCredentials {
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RETRY_FIRST_MS;
  private stopped = false;

  constructor(
    private readonly authority: NatsAuthority,
    private readonly names: NatsNames,
    private readonly store: AgentsStore,
    private readonly pools: { ensurePool(orgId: string, pool: string): Promise<void> },
    private readonly log: Logger,
  ) {}

  /** The pool's consumer, created by the controller only: agents may not. */
  preparePool(orgId: string, pool: string): Promise<void> {
    return this.pools.ensurePool(orgId, pool);
  }

  /** The agent's credentials; its pool's consumer exists first. */
  async issue(agent: Grantee) {
    if (!agent.nats_public_key) throw new Error(`agent ${agent.name} has no NATS key`);
    const pool = poolOf(agent.site_id);
    await this.preparePool(agent.org_id, pool);
    return this.authority.agentJwt(this.names, {
      id: agent.id,
      org_id: agent.org_id,
      name: agent.name,
      pool,
      nats_public_key: agent.nats_public_key,
    });
  }

  /** Answers an agent's signed `nats_credentials` request (a revoked agent never gets here). */
  async renew(agentId: string, payload: unknown): Promise<NatsCredentialsReply> {
    const base = { v: PROTOCOL_VERSION, type: 'nats_credentials', agent_id: agentId } as const;
    try {
      const request = checkMessage(NatsCredentialsRequest, payload, 'NATS credentials request');
      if (request.agent_id !== agentId) throw new Error('agent_id does not match the signer');
      const agent = await this.store.natsKey(agentId);
      if (!agent?.nats_public_key) throw new Error('this agent enrolled without a NATS key; enroll it again');
      const creds = await this.issue(agent);
      return { ...base, ok: true, user_jwt: creds.user_jwt, user_jwt_expires_at: creds.user_jwt_expires_at, error: null };
    } catch (err) {
      return { ...base, ok: false, user_jwt: null, user_jwt_expires_at: null, error: (err as Error).message };
    }
  }

  /**
   * After a revocation (and at start). A failed push is tried again, waiting longer each time,
   * until one succeeds: until then NATS still lets the revoked agent pull and acknowledge its
   * pool's batches (it can open none of them, but acknowledged jobs wait for their deadline).
   */
  async revoked(): Promise<void> {
    this.cancelRetry();
    try {
      await this.pushRevocations();
      this.retryMs = RETRY_FIRST_MS;
    } catch (err) {
      if (this.stopped) return;
      this.log.error(
        { err: (err as Error).message, retry_in_ms: this.retryMs },
        'NATS account update failed: trying again; until then a revoked agent keeps its NATS connection',
      );
      this.retryTimer = setTimeout(() => void this.revoked(), this.retryMs).unref();
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    }
  }

  /** No more retries (the controller is stopping). */
  stop(): void {
    this.stopped = true;
    this.cancelRetry();
  }

  private cancelRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** Pushes the account with every still-relevant revocation; NATS disconnects those agents at once. */
  async pushRevocations(): Promise<void> {
    const since = new Date(Date.now() - this.authority.lifetimeSeconds * 1000 - 60_000);
    const rows = await this.store.revokedNatsKeys(since);
    await this.authority.pushAccount(Object.fromEntries(rows.map((r) => [r.nats_public_key, Math.ceil(r.revoked_at.getTime() / 1000)])));
    this.log.info({ revoked: rows.length }, 'NATS account updated');
  }
}
