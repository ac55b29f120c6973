import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AgentConfigError } from '../../../agent/src/config';
import { DRIVERS } from '../../../agent/src/drivers';
import { loadIdentity, saveIdentity, type AgentIdentity } from '../../../agent/src/identity';
import { natsAgentLink } from '../../../agent/src/nats-link';
import { AgentRuntime, capabilitiesOf } from '../../../agent/src/runtime';
import { AGENT_VERSION } from '../../../agent/src/version';
import { generateAgentKeys } from '../../../shared/src/jobs/crypto';
import { InProcessHub } from '../../../shared/src/jobs/inprocess';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { AgentsStore } from './store';

/**
 * The built-in agent of `npm start`: an agent of the default organization's default pool,
 * running inside the controller process. Its identity lives in <data dir>/agent; it reaches the
 * job engine in-process when there is no NATS_URL and over NATS (like any agent) otherwise.
 */
export async function startBuiltinAgent(app: FastifyInstance, env: NodeJS.ProcessEnv = process.env): Promise<{ runtime: AgentRuntime; stop(): Promise<void> }> {
  const { config, db, agents, jobEngine, log } = { ...app.services, log: app.log };
  const concurrencyRaw = env.SWITCHBOARD_AGENT_CONCURRENCY;
  const concurrency = concurrencyRaw ? Number(concurrencyRaw) : 32;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000) {
    throw new AgentConfigError(`SWITCHBOARD_AGENT_CONCURRENCY must be a whole number from 1 to 10000, got "${concurrencyRaw}"`);
  }
  const stateDir = join(config.dataDir, 'agent');
  const org = await db('organizations').where({ is_default: true }).first('id');
  const store = new AgentsStore(db);
  const capabilities = capabilitiesOf(DRIVERS);
  let identity = loadIdentity(stateDir);
  const keys = identity ? { privateJwk: identity.private_jwk, publicJwk: identity.public_jwk } : await generateAgentKeys();
  const row = await store.upsertBuiltin(org.id, identity?.agent_id ?? null, keys.publicJwk as never, AGENT_VERSION, capabilities);
  const enrollment = await agents.enrollment(row);
  identity = {
    ...enrollment,
    private_jwk: keys.privateJwk,
    public_jwk: keys.publicJwk as never,
    controller_url: null,
    enrolled_at: identity?.agent_id === row.id ? identity.enrolled_at : new Date().toISOString(),
  } satisfies AgentIdentity;
  saveIdentity(stateDir, identity);

  const transport = jobEngine.transport;
  const link = config.natsUrl
    ? await natsAgentLink(config.natsUrl, identity)
    : (transport as InProcessHub).link(row.org_id, DEFAULT_POOL);
  const runtime = new AgentRuntime({
    identity,
    link,
    drivers: DRIVERS,
    concurrency,
    connectConcurrency: Math.min(concurrency, 16),
    version: AGENT_VERSION,
    log: log.child({ agent: 'built-in' }) as never,
    onRevoked: (reason) => log.warn({ reason }, 'the built-in agent was revoked; it takes no more jobs until the next start'),
  });
  await runtime.start();
  log.info({ agent: row.id, pool: DEFAULT_POOL, transport: config.natsUrl ? 'nats' : 'in-process', concurrency }, 'built-in agent running');
  return { runtime, stop: () => runtime.stop() };
}
