import { AgentConfigError } from '../config';

/** Agent settings of the ops server and shutdown, read once at start. */
export interface AgentOpsConfig {
  /** SWITCHBOARD_AGENT_HEALTH_PORT: /healthz, /readyz and /metrics; null = no ops server. */
  healthPort: number | null;
  /** SWITCHBOARD_AGENT_HEALTH_HOST (127.0.0.1): the address the ops server binds. */
  healthHost: string;
  /** SWITCHBOARD_METRICS_TOKEN: when set, /metrics needs it as a bearer token. */
  metricsToken: string | null;
  /** SWITCHBOARD_AGENT_STOP_GRACE_SECONDS (20): on SIGTERM, how long running jobs may take to finish. */
  stopGraceMs: number;
}

export function loadAgentOpsConfig(env: NodeJS.ProcessEnv = process.env): AgentOpsConfig {
  const int = (name: string, fallback: number | null, min: number, max: number): number | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new AgentConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return value;
  };
  const token = env.SWITCHBOARD_METRICS_TOKEN || null;
  if (token !== null && !/^[\x21-\x7e]{16,}$/.test(token)) {
    throw new AgentConfigError('SWITCHBOARD_METRICS_TOKEN must be at least 16 printable characters without spaces (e.g. openssl rand -hex 24)');
  }
  return {
    healthPort: int('SWITCHBOARD_AGENT_HEALTH_PORT', null, 0, 65535),
    healthHost: env.SWITCHBOARD_AGENT_HEALTH_HOST || '127.0.0.1',
    metricsToken: token,
    stopGraceMs: (int('SWITCHBOARD_AGENT_STOP_GRACE_SECONDS', 20, 0, 3600) as number) * 1000,
  };
}
