/**
 * The job machinery as other areas see it: `app.services.jobs` (the JobService of ./types),
 * plus the engine and the agents service for the agents area and the built-in agent.
 */
import type { Logger } from 'pino';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import { controllerKeyFromSecret } from '../../../shared/src/jobs/crypto';
import { InProcessHub } from '../../../shared/src/jobs/inprocess';
import { DEFAULT_PREFIX, jobsSubject, natsNames, poolConsumer, resultsSubject } from '../../../shared/src/nats/subjects';
import type { AuditService } from '../platform/audit-service';
import type { SettingsService } from '../platform/settings-service';
import { AgentsService } from '../agents/service';
import { AgentsStore } from '../agents/store';
import { natsAuthorityOf } from '../agents/nats-authority';
import { AgentNatsCredentials } from '../agents/nats-credentials';
import { ConfigError, type ControllerConfig } from '../config';
import type { Db } from '../db/knex';
import { DEFAULT_TUNABLES, JobEngine, type JobTunables } from './engine';
import { NatsJobTransport, type ResultsIntake } from './nats-transport';

export type { JobKind, JobOutcome, JobService, JobSpec, OutcomeHandler } from './types';
export { JobEngine, DEFAULT_TUNABLES, type JobTunables } from './engine';

declare module '../config' {
  interface ControllerConfig {
    /** Prefix of every NATS subject and stream of the job protocol (SWITCHBOARD_NATS_PREFIX, default sb). */
    natsPrefix?: string;
    /** Replicas of the job protocol's JetStream streams (SWITCHBOARD_NATS_REPLICAS, default 1; 3 on a three-node cluster). */
    natsReplicas?: number;
    /** Job machinery tunables; tests lower them. */
    jobs?: Partial<JobTunables>;
  }
}

function envInt(name: string, min: number, max: number): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** Tunables from the config (tests) over the environment over the defaults. */
export function jobTunables(config: ControllerConfig): JobTunables {
  const ackWait = envInt('SWITCHBOARD_JOB_ACK_WAIT_SECONDS', 1, 3600);
  const sweep = envInt('SWITCHBOARD_JOB_SWEEP_MS', 50, 60_000);
  const resultsAckWait = envInt('SWITCHBOARD_RESULTS_ACK_WAIT_SECONDS', 1, 600);
  const maxAge = envInt('SWITCHBOARD_NATS_STREAM_MAX_AGE_HOURS', 25, 24 * 365);
  const maxMb = envInt('SWITCHBOARD_NATS_STREAM_MAX_MB', 16, 1024 * 1024);
  return {
    ...DEFAULT_TUNABLES,
    ...(ackWait !== undefined ? { ackWaitMs: ackWait * 1000 } : {}),
    ...(sweep !== undefined ? { sweepIntervalMs: sweep } : {}),
    ...(resultsAckWait !== undefined ? { resultsAckWaitMs: resultsAckWait * 1000 } : {}),
    ...(maxAge !== undefined ? { streamMaxAgeMs: maxAge * 3600_000 } : {}),
    ...(maxMb !== undefined ? { streamMaxBytes: maxMb * 1024 ** 2 } : {}),
    ...config.jobs,
  };
}

export function resultsIntake(t: JobTunables): ResultsIntake {
  return { ackWaitMs: t.resultsAckWaitMs, limits: { maxAgeMs: t.streamMaxAgeMs, maxBytes: t.streamMaxBytes } };
}

export function natsPrefixOf(config: ControllerConfig): string {
  const prefix = config.natsPrefix ?? process.env.SWITCHBOARD_NATS_PREFIX ?? DEFAULT_PREFIX;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(prefix)) throw new ConfigError(`SWITCHBOARD_NATS_PREFIX must be letters, digits, '-' or '_', got "${prefix}"`);
  return prefix;
}

export function natsReplicasOf(config: ControllerConfig): number {
  return config.natsReplicas ?? envInt('SWITCHBOARD_NATS_REPLICAS', 1, 5) ?? 1;
}

export function createJobServices(deps: {
  config: ControllerConfig;
  db: Db;
  log: Logger;
  secrets: SecretBox;
  settings: SettingsService;
  audit: AuditService;
}) {
  const { config, db, log } = deps;
  const tunables = jobTunables(config);
  const names = natsNames(natsPrefixOf(config));
  const controllerKey = controllerKeyFromSecret(config.secretKey);
  const authority = natsAuthorityOf(config);
  const controllerAuth = authority ? () => authority.controllerAuth(names) : undefined;
  const nats = config.natsUrl
    ? new NatsJobTransport(config.natsUrl, names, tunables.ackWaitMs, resultsIntake(tunables), log, natsReplicasOf(config), controllerAuth)
    : null;
  const transport = nats ?? new InProcessHub();
  const agentsStore = new AgentsStore(db);
  const engine = new JobEngine({ db, secrets: deps.secrets, settings: deps.settings, log, agents: agentsStore, transport, controllerKey, tunables });
  const natsCredentials = authority && nats ? new AgentNatsCredentials(authority, names, agentsStore, nats, log) : null;
  if (natsCredentials) engine.onRequest('nats_credentials', (agent, payload) => natsCredentials.renew(agent.id, payload));
  const agents = new AgentsService(
    agentsStore,
    deps.settings,
    deps.audit,
    {
      controllerKey: controllerKey.publicJwk as Record<string, unknown>,
      nats: (orgId, agentId, pool) => ({
        prefix: names.prefix,
        jobs_stream: names.jobsStream,
        jobs_subject: jobsSubject(names.prefix, orgId, pool),
        jobs_consumer: poolConsumer(orgId, pool),
        results_stream: names.resultsStream,
        results_subject: resultsSubject(names.prefix, agentId),
        heartbeat_subject: names.heartbeatSubject,
        ack_wait_ms: tunables.ackWaitMs,
      }),
    },
    natsCredentials,
  );
  return { jobs: engine, jobEngine: engine, agents, agentNatsCredentials: natsCredentials };
}
