import type { Logger } from 'pino';
import { NatsCredentialsRequest, PROTOCOL_VERSION, checkMessage, type NatsCredentialsReply } from '../../../shared/src/jobs/messages';
import { poolOf, type NatsNames } from '../../../shared/src/nats/subjects';
import type { NatsAuthority } from '../platform/nats-authority';
import type { AgentsStore } from './store';

type Grantee = { id: string; org_id: string; name: string; site_id: string | null; nats_public_key: string | null };

/**
 * Agent NATS credentials in operator mode: issued at enrollment, renewed on the agent's signed
 * request, revoked through the account's revocation list.
 */
export class AgentNatsCredentials {
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

  /** After a revocation; a failure is logged (the controller refuses the agent's messages anyway) and repaired at the next push. */
  async revoked(): Promise<void> {
    await this.pushRevocations().catch((err) =>
      this.log.error({ err: (err as Error).message }, 'NATS account update failed: the revoked agent stays connected until its credentials expire'),
    );
  }

  /** Pushes the account with every still-relevant revocation; NATS disconnects those agents at once. */
  async pushRevocations(): Promise<void> {
    const since = new Date(Date.now() - this.authority.lifetimeSeconds * 1000 - 60_000);
    const rows = await this.store.revokedNatsKeys(since);
    await this.authority.pushAccount(Object.fromEntries(rows.map((r) => [r.nats_public_key, Math.ceil(r.revoked_at.getTime() / 1000)])));
    this.log.info({ revoked: rows.length }, 'NATS account updated');
  }
}
