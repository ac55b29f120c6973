import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { JWK } from 'jose';
import { generateAgentKeys } from '../../../shared/src/jobs/crypto';
import type { InProcessHub } from '../../../shared/src/jobs/inprocess';
import { DEFAULT_POOL } from '../../../shared/src/nats/subjects';
import { AgentThread } from './agent-thread';
import { AgentsStore } from './store';

/**
 * How often organizations created meanwhile by another controller get their agent (one created
 * through this controller gets it at once).
 */
const ORGANIZATION_SYNC_MS = 5_000;

/** The identity a built-in agent is started with (the agent package's AgentIdentity). */
export type BuiltinIdentity = Awaited<ReturnType<FastifyInstance['services']['agents']['enrollment']>> & {
  private_jwk: JWK;
  public_jwk: JWK;
  controller_url: null;
  enrolled_at: string;
};

/** What the agent package gives the built-in agents (controller/src/builtin-agent.ts passes it in). */
export interface BuiltinAgentKit {
  version: string;
  capabilities: string[];
  /** The worker thread program that runs one agent (agent/src/thread). */
  threadUrl: URL;
  loadIdentity: (stateDir: string) => { agent_id: string; private_jwk: JWK; public_jwk: JWK; enrolled_at: string } | null;
  saveIdentity: (stateDir: string, identity: BuiltinIdentity) => void;
}

export interface BuiltinAgents {
  /** The agent threads by organization id. */
  readonly threads: ReadonlyMap<string, AgentThread>;
  stop(): Promise<void>;
}

function concurrencyOf(env: NodeJS.ProcessEnv): number {
  const raw = env.SWITCHBOARD_AGENT_CONCURRENCY;
  const concurrency = raw ? Number(raw) : 32;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000) {
    throw new Error(`SWITCHBOARD_AGENT_CONCURRENCY must be a whole number from 1 to 10000, got "${raw}"`);
  }
  return concurrency;
}

/**
 * The built-in agent's identity for an organization: the one saved in `stateDir` (its keys kept,
 * its row brought up to date), or a new one; saved back either way.
 */
async function builtinIdentity(
  kit: BuiltinAgentKit,
  store: AgentsStore,
  agents: FastifyInstance['services']['agents'],
  orgId: string,
  stateDir: string,
) {
  const saved = kit.loadIdentity(stateDir);
  const keys = saved ? { privateJwk: saved.private_jwk, publicJwk: saved.public_jwk } : await generateAgentKeys();
  const row = await store.upsertBuiltin(orgId, saved?.agent_id ?? null, keys.publicJwk as never, kit.version, kit.capabilities);
  const identity: BuiltinIdentity = {
    ...(await agents.enrollment(row)),
    private_jwk: keys.privateJwk,
    public_jwk: keys.publicJwk as JWK,
    controller_url: null,
    enrolled_at: saved?.agent_id === row.id ? saved.enrolled_at : new Date().toISOString(),
  };
  kit.saveIdentity(stateDir, identity);
  return { identity, row };
}

/**
 * The built-in agents of `npm start`: one in the default pool of every organization, so that any
 * organization's devices work without enrolling an agent. Each runs in a worker thread of the
 * controller process (AgentThread). Identities live in <data dir>/agent (the default organization,
 * as before there were several) and <data dir>/agent/orgs/<organization id>. Each reaches the job
 * engine in-process (the hub's link, served to the thread over a MessagePort) when there is no
 * NATS_URL, and over NATS (like any agent) otherwise. An organization created while running gets
 * its agent as soon as it is created here, within ORGANIZATION_SYNC_MS when another controller
 * created it.
 */
export async function startBuiltinAgents(app: FastifyInstance, kit: BuiltinAgentKit, env: NodeJS.ProcessEnv = process.env): Promise<BuiltinAgents> {
  const { config, db, agents, jobEngine, users } = app.services;
  const log = app.log;
  const concurrency = concurrencyOf(env);
  const store = new AgentsStore(db);
  const threads = new Map<string, AgentThread>();
  let stopped = false;

  const startOne = async (org: { id: string; is_default: boolean }): Promise<void> => {
    const stateDir = org.is_default ? join(config.dataDir, 'agent') : join(config.dataDir, 'agent', 'orgs', org.id);
    const { identity, row } = await builtinIdentity(kit, store, agents, org.id, stateDir);

    const agentLog = log.child({ agent: 'built-in', org: org.id });
    const hub = config.natsUrl ? null : (jobEngine.transport as InProcessHub);
    const thread = new AgentThread({
      url: kit.threadUrl,
      data: {
        identity,
        natsUrl: config.natsUrl,
        concurrency,
        connectConcurrency: Math.min(concurrency, 16),
        version: kit.version,
        logLevel: log.level,
      },
      link: hub && (() => hub.link(row.org_id, DEFAULT_POOL)),
      log: agentLog,
    });
    await thread.start();
    threads.set(org.id, thread);
    agentLog.info(
      { agent_id: row.id, pool: DEFAULT_POOL, transport: hub ? 'in-process' : 'nats', concurrency },
      'built-in agent running (worker thread)',
    );
  };

  /** Starts the agent of every organization that has none running yet (one pass at a time). */
  let syncing: Promise<void> = Promise.resolve();
  const sync = () =>
    (syncing = syncing
      .catch(() => undefined)
      .then(async () => {
        const orgs: { id: string; is_default: boolean }[] = await db('organizations').orderBy('created_at').select('id', 'is_default');
        for (const org of orgs) if (!stopped && !threads.has(org.id)) await startOne(org);
      }));

  await sync(); // at start, a failure stops `npm start` with its reason
  const syncInBackground = () => {
    sync().catch((err) => log.warn({ err: (err as Error).message }, 'starting a built-in agent failed; retrying'));
  };
  const timer = setInterval(syncInBackground, ORGANIZATION_SYNC_MS);
  timer.unref();
  const unsubscribe = users.store.onOrganizationCreated(syncInBackground);

  return {
    threads,
    async stop() {
      stopped = true;
      unsubscribe();
      clearInterval(timer);
      await syncing.catch(() => undefined);
      await Promise.all([...threads.values()].map((t) => t.stop()));
    },
  };
}
