import type { Logger } from 'pino';
import type { NatsConnection } from 'nats';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  importAgentPrivateKey,
  importControllerPublicKey,
  signJson,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import type { AgentLink } from '../../shared/src/jobs/link';
import { NatsCredentialsReply, PROTOCOL_VERSION, checkMessage, type NatsCredentialsRequest } from '../../shared/src/jobs/messages';
import { saveIdentity, type AgentIdentity } from './identity';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** iat and exp (unix seconds) of a NATS JWT. */
export function jwtTimes(jwt: string): { iat: number; exp: number } {
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
  return { iat: Number(claims.iat), exp: Number(claims.exp) };
}

/**
 * Operator mode: renews the agent's NATS user JWT at half its life by a signed request to the
 * controller, saves it in the state dir and reconnects with it at once (so the old one expiring
 * never drops the connection). A refused or unanswered request is retried well before expiry.
 */
export class NatsRenewal {
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(private readonly o: { identity: AgentIdentity; stateDir: string; log: Logger }) {}

  /** The current JWT (nats.js reads it at every connect). */
  jwt = (): string => this.o.identity.nats.user_jwt ?? '';

  start(link: AgentLink & { connection: NatsConnection }): void {
    this.loop ??= this.run(link);
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    await this.loop;
  }

  private async run(link: AgentLink & { connection: NatsConnection }): Promise<void> {
    const { identity, log } = this.o;
    const sign = (await importAgentPrivateKey(identity.private_jwk)).sign;
    const controller = importControllerPublicKey(identity.controller_key);
    while (!this.stopped.signal.aborted) {
      const { iat, exp } = jwtTimes(this.jwt());
      if (!Number.isFinite(iat) || !Number.isFinite(exp)) return; // credentials that never expire
      const renewAt = (iat + (exp - iat) / 2) * 1000;
      if (Date.now() < renewAt) {
        await sleep(renewAt - Date.now(), this.stopped.signal);
        continue;
      }
      try {
        const request: NatsCredentialsRequest = {
          v: PROTOCOL_VERSION,
          type: 'nats_credentials',
          agent_id: identity.agent_id,
          at: new Date().toISOString(),
        };
        const answer = await link.request(await signJson(request, sign, AGENT_SIGN_ALG, identity.agent_id), 10_000);
        if (!answer) throw new Error('no controller answered');
        const reply = checkMessage(NatsCredentialsReply, await verifyJson(answer, controller, CONTROLLER_SIGN_ALG), 'NATS credentials reply');
        if (!reply.ok || !reply.user_jwt) throw new Error(`the controller refused: ${reply.error ?? 'no reason given'}`);
        identity.nats.user_jwt = reply.user_jwt;
        identity.nats.user_jwt_expires_at = reply.user_jwt_expires_at ?? undefined;
        saveIdentity(this.o.stateDir, identity);
        log.info({ expires_at: reply.user_jwt_expires_at }, 'NATS credentials renewed');
        await link.connection.reconnect();
      } catch (err) {
        if (this.stopped.signal.aborted) break;
        log.warn({ err: (err as Error).message, expires_at: new Date(exp * 1000).toISOString() }, 'NATS credentials not renewed yet; retrying');
        await sleep(Math.max(1_000, Math.min(30_000, (exp * 1000 - Date.now()) / 4)), this.stopped.signal);
      }
    }
  }
}
