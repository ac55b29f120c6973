import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { generateAgentKeys } from '../../shared/src/jobs/crypto';
import { AgentConfigError, type AgentConfig } from './config';
import type { NatsLinkIdentity } from './nats-link';
import type { RuntimeIdentity } from './runtime';
import { natsSeed, secureStateDir, writeSecret } from './state-dir';

/** What enrollment gave the agent; kept in the state dir (mode 0600) and reused after restarts. */
export interface AgentIdentity extends RuntimeIdentity, NatsLinkIdentity {
  name: string;
  site_id: string | null;
  public_jwk: JWK;
  controller_url: string | null;
  enrolled_at: string;
  nats: NatsLinkIdentity['nats'] & {
    jobs_subject: string;
    results_stream: string;
    /** NATS operator mode: the user JWT the controller signed for this agent's nkey, renewed before it expires. */
    user_jwt?: string;
    user_jwt_expires_at?: string;
  };
}

export const IDENTITY_FILE = 'identity.json';

export function loadIdentity(stateDir: string): AgentIdentity | null {
  const file = join(stateDir, IDENTITY_FILE);
  if (!existsSync(file)) return null;
  try {
    const identity = JSON.parse(readFileSync(file, 'utf8')) as AgentIdentity;
    if (!identity.agent_id || !identity.private_jwk || !identity.controller_key || !identity.nats?.jobs_consumer)
      throw new Error('fields are missing');
    return identity;
  } catch (err) {
    throw new AgentConfigError(
      `SWITCHBOARD_AGENT_STATE_DIR holds an unreadable ${IDENTITY_FILE} (${(err as Error).message}); remove it and enroll again with a new token`,
    );
  }
}

export function saveIdentity(stateDir: string, identity: AgentIdentity): void {
  secureStateDir(stateDir);
  const file = join(stateDir, IDENTITY_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeSecret(tmp, JSON.stringify(identity, null, 2) + '\n');
  renameSync(tmp, file);
}

/** Redeems the one-time token with a fresh key pair; the identity is saved before it is used. */
export async function enroll(config: AgentConfig, version: string, capabilities: string[]): Promise<AgentIdentity> {
  if (!config.controllerUrl)
    throw new AgentConfigError('SWITCHBOARD_URL is required to enroll: the controller base URL, e.g. http://controller:8080');
  if (!config.enrollToken)
    throw new AgentConfigError(
      'SWITCHBOARD_ENROLL_TOKEN is required to enroll: create the agent with POST /api/agents and pass its enrollment_token',
    );
  // The state dir must be writable, and the NATS key exist, before the token is spent.
  let natsKey: string;
  try {
    secureStateDir(config.stateDir);
    natsKey = natsSeed(config.stateDir, true).publicKey;
  } catch (err) {
    throw new AgentConfigError(`SWITCHBOARD_AGENT_STATE_DIR "${config.stateDir}" is not writable: ${(err as Error).message}`);
  }
  const keys = await generateAgentKeys();
  let res: Response;
  try {
    res = await fetch(`${config.controllerUrl}/api/agents/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: config.enrollToken, public_key: keys.publicJwk, nats_public_key: natsKey, version, capabilities }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new AgentConfigError(
      `SWITCHBOARD_URL: cannot reach the controller at ${config.controllerUrl}: ${String((err as Error).cause ?? (err as Error).message)}`,
    );
  }
  const text = await res.text();
  let body: Record<string, any> = {};
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: reported below */
  }
  if (res.status === 401) throw new AgentConfigError(`SWITCHBOARD_ENROLL_TOKEN was refused: ${body.error ?? text}`);
  if (res.status !== 200)
    throw new AgentConfigError(`SWITCHBOARD_URL: enrollment failed with HTTP ${res.status}: ${body.error ?? text.slice(0, 200)}`);
  const identity: AgentIdentity = {
    agent_id: body.agent_id,
    org_id: body.org_id,
    name: body.name,
    site_id: body.site_id,
    pool: body.pool,
    private_jwk: keys.privateJwk,
    public_jwk: keys.publicJwk as unknown as JWK,
    controller_key: body.controller_key,
    controller_url: config.controllerUrl,
    heartbeat_interval_ms: body.heartbeat_interval_ms,
    enrolled_at: new Date().toISOString(),
    nats: body.nats,
  };
  saveIdentity(config.stateDir, identity);
  return identity;
}
