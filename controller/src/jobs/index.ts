/**
 * The job machinery as other areas see it: `app.services.jobs` (the JobService of ./types),
 * built by createJobEngine over the ports of ./ports (the composition root plugs the areas in).
 */
import type { Logger } from 'pino';
import { controllerKeyFromSecret, type ControllerKey } from '../../../shared/src/jobs/crypto';
import { InProcessHub } from '../../../shared/src/jobs/inprocess';
import { DEFAULT_PREFIX, natsNames, type NatsNames } from '../../../shared/src/nats/subjects';
import type { SettingsService } from '../platform/settings-service';
import type { NatsAuthority } from '../platform/nats-authority';
import { ConfigError, type ControllerConfig } from '../config';
import type { Db } from '../db/knex';
import { DEFAULT_TUNABLES, JobEngine, type JobTunables } from './engine';
import { NatsJobTransport, type ResultsIntake } from './nats-transport';
import type { AgentDirectory, TargetLoader } from './ports';

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

/** What the agents area needs of the job plane to enroll agents and hand them NATS credentials. */
export interface JobPlane {
  names: NatsNames;
  tunables: JobTunables;
  controllerKey: ControllerKey;
  authority: NatsAuthority | null;
  /** The NATS transport; null when jobs travel in-process (no NATS_URL). */
  nats: NatsJobTransport | null;
}

/** The job engine over NATS (NATS_URL) or the in-process hub, with the ports it talks through. */
export function createJobEngine(deps: {
  config: ControllerConfig;
  db: Db;
  log: Logger;
  settings: SettingsService;
  agents: AgentDirectory;
  targets: TargetLoader;
  /** Operator-mode NATS (agents' own credentials); null: the server's static users. */
  authority: NatsAuthority | null;
}): { engine: JobEngine; plane: JobPlane } {
  const { config, db, log } = deps;
  const tunables = jobTunables(config);
  const names = natsNames(natsPrefixOf(config));
  const controllerKey = controllerKeyFromSecret(config.secretKey);
  const { authority } = deps;
  const controllerAuth = authority ? () => authority.controllerAuth(names) : undefined;
  const nats = config.natsUrl
    ? new NatsJobTransport(config.natsUrl, names, tunables.ackWaitMs, resultsIntake(tunables), log, natsReplicasOf(config), controllerAuth)
    : null;
  const transport = nats ?? new InProcessHub();
  const engine = new JobEngine({ db, settings: deps.settings, log, agents: deps.agents, targets: deps.targets, transport, controllerKey, tunables });
  return { engine, plane: { names, tunables, controllerKey, authority, nats } };
}
