/**
 * NATS names of the job protocol. Everything lives under one prefix (default `sb`) so that
 * several installations, or parallel test files, can share a NATS server without colliding.
 *
 *   <prefix>.jobs.<org>.<pool>      job messages for one pool; JetStream work queue <PREFIX>_JOBS,
 *                                   one durable pull consumer per pool shared by its agents
 *   <prefix>.results.<agent>        events from agents (started, logs, result, rejected); JetStream
 *                                   work queue <PREFIX>_RESULTS, one durable consumer shared by
 *                                   every controller replica
 *   <prefix>.heartbeat              agent requests: heartbeats and pre-deployment backups to store
 *                                   (core NATS request/reply, controller queue group)
 *
 * A pool is a site id, or `default` for devices without a site or whose site has no agents.
 * Pools are per organization: the default pool of one organization is not another's.
 */

export const DEFAULT_PREFIX = 'sb';
export const DEFAULT_POOL = 'default';

export interface NatsNames {
  prefix: string;
  jobsStream: string;
  resultsStream: string;
  resultsConsumer: string;
  heartbeatSubject: string;
  controllerQueue: string;
}

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws when the prefix could not be a single NATS subject token and stream name part. */
export function checkPrefix(prefix: string): string {
  if (!TOKEN.test(prefix)) throw new Error(`NATS prefix must be letters, digits, '-' or '_' (got "${prefix}")`);
  return prefix;
}

export function natsNames(prefix = DEFAULT_PREFIX): NatsNames {
  checkPrefix(prefix);
  const upper = prefix.toUpperCase().replace(/-/g, '_');
  return {
    prefix,
    jobsStream: `${upper}_JOBS`,
    resultsStream: `${upper}_RESULTS`,
    resultsConsumer: 'controller',
    heartbeatSubject: `${prefix}.heartbeat`,
    controllerQueue: 'controllers',
  };
}

function token(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new Error(`bad ${what} for a NATS subject: "${value}"`);
  return value;
}

/** The pool of a site id (or null for the default pool). */
export const poolOf = (siteId: string | null | undefined): string => siteId ?? DEFAULT_POOL;

export const jobsSubject = (prefix: string, orgId: string, pool: string) =>
  `${prefix}.jobs.${token(orgId, 'organization id')}.${token(pool, 'pool')}`;
export const jobsWildcard = (prefix: string) => `${prefix}.jobs.>`;
/** Durable consumer of one pool's job queue; every agent of the pool pulls from it. */
export const poolConsumer = (orgId: string, pool: string) => `jobs_${token(orgId, 'organization id')}_${token(pool, 'pool')}`;

export const resultsSubject = (prefix: string, agentId: string) => `${prefix}.results.${token(agentId, 'agent id')}`;
export const resultsWildcard = (prefix: string) => `${prefix}.results.*`;

/**
 * An agent's inbox prefix: replies to it (pulled jobs, acks, heartbeat answers) go nowhere else.
 * Under `_INBOX.` so a controller allowed `_INBOX.>` (deploy/nats-server.conf) can answer it.
 */
export const agentInbox = (agentId: string) => `_INBOX.${agentId}`;

/**
 * Whether a request's reply subject is under an agent's inbox, the only place the controller
 * answers: NATS does not check reply subjects against the requester's permissions, so a request
 * answered anywhere could make the controller publish into the job or result streams.
 */
export const isAgentInbox = (subject: string | undefined): subject is string =>
  subject !== undefined && /^_INBOX\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[^\s*>]+$/.test(subject);
