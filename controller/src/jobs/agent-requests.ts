import { CONTROLLER_SIGN_ALG, signJson, signerOf, type ControllerKey } from '../../../shared/src/jobs/crypto';
import type { AgentSigners, Verified } from './agent-signers';
import { SignerChanged, type RequestHandler, type RequestOptions } from './types';

export interface AgentRequestDeps {
  signers: AgentSigners;
  controllerKey: ControllerKey;
  /** The reply to a heartbeat, or to a request refused or of no known type (it tells the agent why). */
  heartbeat(kid: string | null, v: Verified): Promise<Record<string, unknown>>;
}

/**
 * Agents' requests (request/reply over the transport): a registered handler answers its type
 * for a verified agent; anything else is a heartbeat. Every reply is signed by the controller.
 *
 * The signer's row is read fresh, so a revoked agent is refused at once, except for a handler
 * that checks the signer again in the statement that does its work (`checksSigner`): it gets the
 * row last read, and when its statement finds the agent revoked or with another key it throws
 * SignerChanged and the request is answered again from a fresh read. A deploy job's backup_store
 * request is on every device's path, and the read cost it a round trip to PostgreSQL.
 */
export class AgentRequests {
  private readonly handlers = new Map<string, { handle: RequestHandler } & RequestOptions>();

  constructor(private readonly deps: AgentRequestDeps) {}

  on(type: string, handle: RequestHandler, options: RequestOptions = {}): void {
    this.handlers.set(type, { handle, ...options });
  }

  async answer(token: string): Promise<string> {
    const reply = (await this.answerAs(token, 'lastRead')) ?? (await this.answerAs(token, 'fresh'));
    return signJson(reply, this.deps.controllerKey.privateKey, CONTROLLER_SIGN_ALG);
  }

  /** The reply, or null when the signer's row last read may not be trusted for this request (then it is read fresh). */
  private async answerAs(token: string, read: 'fresh' | 'lastRead'): Promise<Record<string, unknown> | null> {
    const { signers } = this.deps;
    const { agents, lastRead } = await signers.ofRequest(token, read);
    const v = await signers.verify(token, agents);
    const type = 'payload' in v ? (v.payload as { type?: unknown } | null)?.type : undefined;
    const handler = typeof type === 'string' ? this.handlers.get(type) : undefined;
    if (lastRead && !(handler?.checksSigner && 'payload' in v)) return null;
    if (!handler || !('payload' in v)) return this.deps.heartbeat(signerOf(token), v);
    const { id, org_id, public_key, site_id } = v.agent;
    try {
      return await handler.handle({ id, org_id, public_key: public_key!, site_id }, v.payload);
    } catch (err) {
      if (!(err instanceof SignerChanged)) throw err;
      signers.forget(id);
      // Read fresh, it changed again before the statement: refused like a revoked agent, told why.
      return lastRead ? null : this.deps.heartbeat(signerOf(token), { refused: err.message, agent: v.agent });
    }
  }
}
