/**
 * The controller's side of NATS operator mode: it holds the application account's seed and an
 * operator signing key, signs each agent a short-lived user JWT allowing exactly its own subjects,
 * and pushes account updates (revocations) to the server through the system account.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createUser, encodeUser, fromPublic, type KeyPair } from '@nats-io/jwt';
import { connect, credsAuthenticator, jwtAuthenticator, StringCodec, type ConnectionOptions } from 'nats';
import { natsServers } from '../../../shared/src/nats/jetstream';
import { OPERATOR_FILES, encodeAppAccount, readSeed } from '../../../shared/src/nats/operator';
import { agentInbox, poolConsumer, resultsSubject, type NatsNames } from '../../../shared/src/nats/subjects';
import { ConfigError, type ControllerConfig } from '../config';

declare module '../config' {
  interface ControllerConfig {
    /** SWITCHBOARD_NATS_OPERATOR_DIR: the keys `npm run nats:operator` made; set = NATS operator (JWT) mode. */
    natsOperatorDir?: string | null;
    /** SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS (86400): how long an agent's NATS credentials last; agents renew at half-life. */
    natsJwtLifetimeSeconds?: number;
  }
}

const sc = StringCodec();
const NKEY_USER = /^U[A-Z2-7]{55}$/;

export const isUserNkey = (key: unknown): key is string => typeof key === 'string' && NKEY_USER.test(key);

export interface AgentGrant {
  id: string;
  org_id: string;
  name: string;
  pool: string;
  nats_public_key: string;
}

/** The subjects an agent may use, and nothing else (consumers are created by the controller only). */
export function agentPermissions(names: NatsNames, agent: Pick<AgentGrant, 'id' | 'org_id' | 'pool'>) {
  const consumer = poolConsumer(agent.org_id, agent.pool);
  return {
    pub: {
      allow: [
        resultsSubject(names.prefix, agent.id),
        names.heartbeatSubject,
        `$JS.API.CONSUMER.INFO.${names.jobsStream}.${consumer}`,
        `$JS.API.CONSUMER.MSG.NEXT.${names.jobsStream}.${consumer}`,
        `$JS.ACK.${names.jobsStream}.${consumer}.>`,
      ],
      deny: [],
    },
    sub: { allow: [`${agentInbox(agent.id)}.>`], deny: [] },
  };
}

export class NatsAuthority {
  private readonly account: KeyPair;
  private readonly operatorSigner: KeyPair;
  private readonly systemCreds: Uint8Array;
  /** The controller's own user in the application account (a fresh key each start). */
  private readonly self = createUser();
  private selfJwt: Promise<string> | null = null;

  constructor(
    dir: string,
    private readonly url: string,
    readonly lifetimeSeconds: number,
  ) {
    try {
      this.account = readSeed(dir, OPERATOR_FILES.accountSeed);
      this.operatorSigner = readSeed(dir, OPERATOR_FILES.operatorSigningSeed);
      this.systemCreds = readFileSync(join(dir, OPERATOR_FILES.systemUserCreds));
    } catch (err) {
      throw new ConfigError(`SWITCHBOARD_NATS_OPERATOR_DIR "${dir}" does not hold the files of \`npm run nats:operator\`: ${(err as Error).message}`);
    }
  }

  get accountId(): string {
    return this.account.getPublicKey();
  }

  /** Connect options of the controller's own connection: a user JWT it signs itself, its own inbox prefix. */
  async controllerAuth(names: NatsNames): Promise<Partial<ConnectionOptions>> {
    this.selfJwt ??= encodeUser(`switchboard-controller ${names.prefix}`, this.self, this.account);
    return { authenticator: jwtAuthenticator(await this.selfJwt, this.self.getSeed()), inboxPrefix: `_INBOX_${names.prefix}_controller` };
  }

  /** A user JWT for one agent: its pool's consumer, its results subject, heartbeats, its inbox. */
  async agentJwt(names: NatsNames, agent: AgentGrant): Promise<{ user_jwt: string; user_jwt_expires_at: string; inbox_prefix: string }> {
    const exp = Math.floor(Date.now() / 1000) + this.lifetimeSeconds;
    const jwt = await encodeUser(
      `agent ${agent.name} (${agent.id})`,
      fromPublic(agent.nats_public_key),
      this.account,
      { ...agentPermissions(names, agent), tags: [`org:${agent.org_id}`, `agent:${agent.id}`] } as never,
      { exp },
    );
    return { user_jwt: jwt, user_jwt_expires_at: new Date(exp * 1000).toISOString(), inbox_prefix: agentInbox(agent.id) };
  }

  /**
   * Pushes the application account with these revocations (user public key → revoked at); NATS
   * drops the revoked users' connections at once and refuses their JWTs from then on.
   */
  async pushAccount(revocations: Record<string, number>): Promise<void> {
    const jwt = await encodeAppAccount(this.accountId, this.operatorSigner, revocations);
    const nc = await connect({
      ...natsServers(this.url),
      authenticator: credsAuthenticator(this.systemCreds),
      name: 'switchboard-controller (account updates)',
    });
    try {
      const reply = JSON.parse(
        sc.decode((await nc.request(`$SYS.REQ.ACCOUNT.${this.accountId}.CLAIMS.UPDATE`, sc.encode(jwt), { timeout: 5_000 })).data),
      );
      if (reply.error) throw new Error(`NATS refused the account update: ${reply.error.description ?? JSON.stringify(reply.error)}`);
    } finally {
      await nc.close();
    }
  }
}

/** The authority when operator mode is configured (config over SWITCHBOARD_NATS_OPERATOR_DIR), else null. */
export function natsAuthorityOf(config: ControllerConfig): NatsAuthority | null {
  const dir = config.natsOperatorDir ?? (process.env.SWITCHBOARD_NATS_OPERATOR_DIR || null);
  if (!dir) return null;
  if (!config.natsUrl) throw new ConfigError('SWITCHBOARD_NATS_OPERATOR_DIR needs NATS_URL: operator mode secures an external NATS server');
  if (!existsSync(resolve(dir)))
    throw new ConfigError(`SWITCHBOARD_NATS_OPERATOR_DIR "${dir}" does not exist; create it with \`npm run nats:operator -- ${dir}\``);
  const raw = process.env.SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS;
  const lifetime = config.natsJwtLifetimeSeconds ?? (raw ? Number(raw) : 86_400);
  if (!Number.isInteger(lifetime) || lifetime < 10 || lifetime > 30 * 86_400) {
    throw new ConfigError(
      `SWITCHBOARD_NATS_JWT_LIFETIME_SECONDS must be a whole number from 10 to 2592000, got "${config.natsJwtLifetimeSeconds ?? raw}"`,
    );
  }
  return new NatsAuthority(resolve(dir), config.natsUrl, lifetime);
}
