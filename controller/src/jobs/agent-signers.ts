/**
 * Who signed an agent's message: the agent rows behind the signatures (read fresh, so a revoked
 * agent is refused at once, unless the caller checks the row itself: see ofRequest) and their
 * public keys, imported once per key.
 */
import { AGENT_SIGN_ALG, importAgentPublicKey, signerOf, verifyJson, type AnyKey, type PublicJwk } from '../../../shared/src/jobs/crypto';
import { Batcher } from '../../../shared/src/jobs/limit';
import type { AgentDirectory, AgentIdentityRow } from './ports';
import { UUID } from '../db/knex';

/** A checked signature: the agent and what it signed, or why it was refused. */
export type Verified = { agent: AgentIdentityRow; payload: unknown } | { refused: string; agent?: AgentIdentityRow };

export class AgentSigners {
  private readonly keys = new Map<string, { x: string; key: Promise<AnyKey> }>();
  /** Each agent's row as last read, for requests whose handler checks it again in its own statement. */
  private readonly lastRead = new Map<string, AgentIdentityRow>();
  /**
   * Signers of requests (a deploy job's backup_store, heartbeats), read together for the
   * requests that arrive while the previous read is out; the handlers then take the gathered
   * requests as one batch (see deployments/backup-store.ts). No fixed gather on top: a deploy
   * job's backup_store waits with its device session open, and on a quiet 2-core machine (deploy
   * bench, 500 devices) a 15 ms gather made its round trip 26 ms against 18, for the same CPU.
   */
  private readonly requestSigners = new Batcher<string, AgentIdentityRow | undefined>(async (ids) => {
    const rows = await this.agents.identities([...new Set(ids)]);
    for (const row of rows.values()) this.lastRead.set(row.id, row);
    return ids.map((id) => rows.get(id));
  }, 500);

  constructor(private readonly agents: AgentDirectory) {}

  /** The agent rows behind a batch of tokens, by id (unknown signers are simply absent). */
  async ofTokens(tokens: string[]): Promise<Map<string, AgentIdentityRow>> {
    const kids = [...new Set(tokens.map(signerOf).filter((k): k is string => k !== null && UUID.test(k)))];
    return this.agents.identities(kids);
  }

  /**
   * The agent row behind one request's token, read with the other requests of the moment; with
   * `lastRead`, the row as last read when there is one (`lastRead` in the answer), which only a
   * caller that checks the row again where it acts may trust.
   */
  async ofRequest(token: string, read: 'fresh' | 'lastRead' = 'fresh'): Promise<{ agents: Map<string, AgentIdentityRow>; lastRead: boolean }> {
    const kid = signerOf(token);
    if (!kid || !UUID.test(kid)) return { agents: new Map(), lastRead: false };
    const known = read === 'lastRead' ? this.lastRead.get(kid) : undefined;
    const signer = known ?? (await this.requestSigners.add(kid));
    return { agents: new Map(signer ? [[signer.id, signer]] : []), lastRead: known !== undefined };
  }

  /** Drops the row last read of an agent (its request found it changed): its next request reads it fresh. */
  forget(agentId: string): void {
    this.lastRead.delete(agentId);
  }

  /**
   * Checks the signature against the agent's stored key; revoked and unknown agents are refused.
   * `agent` comes with a refusal only when the signature is that agent's (a revoked agent).
   * `form`: events are detached only; requests come in either form.
   */
  async verify(token: string, agents: Map<string, AgentIdentityRow>, form: 'any' | 'detached' = 'any'): Promise<Verified> {
    const kid = signerOf(token);
    const agent = kid ? agents.get(kid) : undefined;
    if (!agent || !agent.public_key) return { refused: `unknown agent ${kid ?? '(no kid)'}` };
    let payload: unknown;
    try {
      payload = await verifyJson(token, await this.keyOf(agent), AGENT_SIGN_ALG, form);
    } catch {
      return { refused: `bad signature claiming to be agent ${agent.name}` };
    }
    // Only the revoked agent itself learns it is revoked, and only its own signed messages are
    // acted on (its jobs handed back): a kid is anybody's to write.
    if (agent.revoked_at) return { refused: `agent ${agent.name} is revoked`, agent };
    return { agent, payload };
  }

  private keyOf(agent: AgentIdentityRow): Promise<AnyKey> {
    const jwk = agent.public_key as PublicJwk;
    const hit = this.keys.get(agent.id);
    if (hit && hit.x === jwk.x) return hit.key;
    const key = importAgentPublicKey(jwk);
    this.keys.set(agent.id, { x: jwk.x, key });
    return key;
  }
}
