import { resolve } from 'node:path';

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

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new AgentConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function urlFrom(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (!raw) return null;
  for (const part of raw.split(',')) {
    let url: URL;
    try {
      url = new URL(part.trim());
    } catch {
      throw new AgentConfigError(`${name} is not a valid URL: "${part}"`);
    }
    if (!protocols.includes(url.protocol)) throw new AgentConfigError(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw.replace(/\/$/, '');
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const natsUrl = urlFrom(env, 'NATS_URL', ['nats:', 'tls:', 'ws:', 'wss:']);
  if (!natsUrl) throw new AgentConfigError('NATS_URL is required: the NATS server the agent takes jobs from, e.g. nats://controller.example.com:4222');
  const concurrency = intFrom(env, 'SWITCHBOARD_AGENT_CONCURRENCY', 32, 1, 10_000);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LEVELS.includes(logLevel)) throw new AgentConfigError(`LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${logLevel}"`);
  const token = env.SWITCHBOARD_ENROLL_TOKEN?.trim() || null;
  return {
    controllerUrl: urlFrom(env, 'SWITCHBOARD_URL', ['http:', 'https:']),
    enrollToken: token,
    natsUrl,
    stateDir: resolve(env.SWITCHBOARD_AGENT_STATE_DIR || './agent-state'),
    concurrency,
    connectConcurrency: intFrom(env, 'SWITCHBOARD_AGENT_CONNECT_CONCURRENCY', Math.min(concurrency, 16), 1, 10_000),
    logLevel,
  };
}
