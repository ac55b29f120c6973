import { resolve } from 'node:path';
import { intFrom, urlFrom } from '../../shared/src/config/env';

/** Agent settings read once from the environment; a missing or bad one stops the agent with one line. */
export interface AgentConfig {
  controllerUrl: string | null;
  enrollToken: string | null;
  natsUrl: string;
  stateDir: string;
  concurrency: number;
  connectConcurrency: number;
  logLevel: string;
}

export class AgentConfigError extends Error {
  override name = 'AgentConfigError';
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** URLs without a trailing slash, so paths can be appended as `${url}/api/...`. */
const url = (env: NodeJS.ProcessEnv, name: string, protocols: string[]) =>
  urlFrom(AgentConfigError, env, name, protocols)?.replace(/\/$/, '') ?? null;

export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const natsUrl = url(env, 'NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']);
  if (!natsUrl)
    throw new AgentConfigError('NATS_URL is required: the NATS server the agent takes jobs from, e.g. nats://controller.example.com:4222');
  const concurrency = intFrom(AgentConfigError, env, 'SWITCHBOARD_AGENT_CONCURRENCY', 32, 1, 10_000);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LEVELS.includes(logLevel)) throw new AgentConfigError(`LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${logLevel}"`);
  const token = env.SWITCHBOARD_ENROLL_TOKEN?.trim() || null;
  return {
    controllerUrl: url(env, 'SWITCHBOARD_URL', ['http:', 'https:']),
    enrollToken: token,
    natsUrl,
    stateDir: resolve(env.SWITCHBOARD_AGENT_STATE_DIR || './agent-state'),
    concurrency,
    connectConcurrency: intFrom(AgentConfigError, env, 'SWITCHBOARD_AGENT_CONNECT_CONCURRENCY', Math.min(concurrency, 16), 1, 10_000),
    logLevel,
  };
}
