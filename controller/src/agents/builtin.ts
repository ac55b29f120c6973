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

/** How often organizations created meanwhile (by this controller or another) get their agent. */
const ORGANIZATION_SYNC_MS = 5_000;

export interface BuiltinAgents {
  /** The running agents by organization id. */
  readonly runtimes: ReadonlyMap<string, AgentRuntime>;
  stop(): Promise<void>;
}

function concurrencyOf(env: NodeJS.ProcessEnv): number {
  const raw = env.SWITCHBOARD_AGENT_CONCURRENCY;
  const concurrency = raw ? Number(raw) : 32;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000) {
    throw new AgentConfigError(`SWITCHBOARD_AGENT_CONCURRENCY must be a whole number from 1 to 10000, got "${raw}"`);
  }
  return concurrency;
}

/**
 * The built-in agents of `npm start`: one in the default pool of every organization, running
 * inside the controller process, so that any organization's devices work without enrolling an
 * agent. Identities live in <data dir>/agent (the default organization, as before there were
 * several) and <data dir>/agent/orgs/<organization id>. Each reaches the job engine in-process
 * when there is no NATS_URL and over NATS (like any agent) otherwise. An organization created
 * while running gets its agent within ORGANIZATION_SYNC_MS.
 */
export async function startBuiltinAgents(app: FastifyInstance, env: NodeJS.ProcessEnv = process.env): Promise<BuiltinAgents> {
  const { config, db, agents, jobEngine } = app.services;
  const log = app.log;
  const concurrency = concurrencyOf(env);
  const store = new AgentsStore(db);
  const capabilities = capabilitiesOf(DRIVERS);
  const runtimes = new Map<string, AgentRuntime>();
  let stopped = false;

  const startOne = async (org: { id: string; is_default: boolean }): Promise<void> => {
    const stateDir = org.is_default ? join(config.dataDir, 'agent') : join(config.dataDir, 'agent', 'orgs', org.id);
    let identity = loadIdentity(stateDir);
    const keys = identity ? { privateJwk: identity.private_jwk, publicJwk: identity.public_jwk } : await generateAgentKeys();
    const row = await store.upsertBuiltin(org.id, identity?.agent_id ?? null, keys.publicJwk as never, AGENT_VERSION, capabilities);
    identity = {
      ...(await agents.enrollment(row)),
      private_jwk: keys.privateJwk,
      public_jwk: keys.publicJwk as never,
      controller_url: null,
      enrolled_at: identity?.agent_id === row.id ? identity.enrolled_at : new Date().toISOString(),
    } satisfies AgentIdentity;
    saveIdentity(stateDir, identity);

    const link = config.natsUrl ? await natsAgentLink(config.natsUrl, identity) : (jobEngine.transport as InProcessHub).link(row.org_id, DEFAULT_POOL);
    const agentLog = log.child({ agent: 'built-in', org: org.id });
    const runtime = new AgentRuntime({
      identity,
      link,
      drivers: DRIVERS,
      concurrency,
      connectConcurrency: Math.min(concurrency, 16),
      version: AGENT_VERSION,
      log: agentLog as never,
      onRevoked: (reason) => agentLog.warn({ reason }, 'the built-in agent was revoked; it takes no more jobs until the next start'),
    });
    await runtime.start();
    runtimes.set(org.id, runtime);
    agentLog.info({ agent: row.id, pool: DEFAULT_POOL, transport: config.natsUrl ? 'nats' : 'in-process', concurrency }, 'built-in agent running');
  };

  /** Starts the agent of every organization that has none running yet (one pass at a time). */
  let syncing: Promise<void> = Promise.resolve();
  const sync = () =>
    (syncing = syncing.catch(() => undefined).then(async () => {
      const orgs: { id: string; is_default: boolean }[] = await db('organizations').orderBy('created_at').select('id', 'is_default');
      for (const org of orgs) if (!stopped && !runtimes.has(org.id)) await startOne(org);
    }));

  await sync(); // at start, a failure stops `npm start` with its reason
  const timer = setInterval(() => {
    sync().catch((err) => log.warn({ err: (err as Error).message }, 'starting a built-in agent failed; retrying'));
  }, ORGANIZATION_SYNC_MS);
  timer.unref();

  return {
    runtimes,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await syncing.catch(() => undefined);
      await Promise.all([...runtimes.values()].map((r) => r.stop()));
    },
  };
}
