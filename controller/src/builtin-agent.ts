/**
 * Composition of `npm start`'s built-in agents: the one file under controller/src that imports
 * the agent package (its public entry only). The agents area (controller/src/agents/builtin-service.ts)
 * enrolls them and runs each in a worker thread; this hands it what the agent package provides.
 */
import type { FastifyInstance } from 'fastify';
import { AGENT_THREAD_URL, AGENT_VERSION, DRIVERS, capabilitiesOf, loadIdentity, saveIdentity } from '../../agent/src/index';
import { startBuiltinAgents, type BuiltinAgents } from './agents/builtin-service';

export type { BuiltinAgents } from './agents/builtin-service';

export function startBuiltinAgent(app: FastifyInstance, env: NodeJS.ProcessEnv = process.env): Promise<BuiltinAgents> {
  return startBuiltinAgents(
    app,
    { version: AGENT_VERSION, capabilities: capabilitiesOf(DRIVERS), threadUrl: AGENT_THREAD_URL, loadIdentity, saveIdentity },
    env,
  );
}
