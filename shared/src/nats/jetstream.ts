/**
 * NATS connection and the JetStream streams and consumers of the job protocol, set up the same
 * way by the controller and by agents (whichever comes first creates them; both are idempotent).
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type ConnectionOptions,
  type JetStreamManager,
  type NatsConnection,
} from 'nats';
import { jobsWildcard, poolConsumer, jobsSubject, resultsWildcard, type NatsNames } from './subjects';

/**
 * NATS_URL as connect options. nats.js ignores credentials inside a URL, so `user:password@`
 * (or `token@`) of the first server carrying them become the user/pass (or token) options.
 */
export function natsServers(url: string): { servers: string[]; user?: string; pass?: string; token?: string } {
  const servers: string[] = [];
  let auth: { user?: string; pass?: string; token?: string } = {};
  for (const raw of url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = raw.lastIndexOf('@');
    const scheme = raw.indexOf('://');
    if (at < 0 || scheme < 0 || at < scheme) {
      servers.push(raw);
      continue;
    }
    const [user, pass] = raw.slice(scheme + 3, at).split(/:(.*)/s);
    servers.push(raw.slice(0, scheme + 3) + raw.slice(at + 1));
    if (Object.keys(auth).length > 0) continue;
    auth = pass !== undefined ? { user: decodeURIComponent(user), pass: decodeURIComponent(pass) } : { token: decodeURIComponent(user) };
  }
  return { servers, ...auth };
}

/**
 * Reconnects forever, quickly: a NATS restart must not end a controller or an agent. `auth` is
 * operator mode's user JWT authenticator and inbox prefix.
 */
export async function connectNats(url: string, name: string, auth: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  return connect({
    ...natsServers(url),
    ...auth,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 5_000,
    maxPingOut: 2,
    waitOnFirstConnect: true,
    // Request errors (a fetch that expires empty, a timed-out publish) are expected and handled;
    // building a stack trace for each costs more than the request itself under load.
    noAsyncTraces: true,
  });
}

const notFound = (err: unknown) => /not found/i.test(String((err as Error)?.message ?? err));

/**
 * Age and size limits of the two work-queue streams. A job message outlives its deadline only
 * when NATS lost the controller's retraction (a crash between the two); a result outlives its
 * job only when no controller ran for as long. Either is dead weight after the longest job
 * deadline (a snapshot may take 24 h), so the streams drop messages older than that, and refuse
 * new ones once full (the publisher sees the error and retries) instead of dropping old ones.
 */
export interface StreamLimits {
  maxAgeMs: number;
  maxBytes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { maxAgeMs: 26 * 3600_000, maxBytes: 1024 ** 3 };

/** How the controller wants the streams; agents pass nothing and leave existing streams alone. */
export interface StreamOptions {
  limits?: StreamLimits;
  /** Update an existing stream whose limits differ (the controller). */
  enforce?: boolean;
  /** SWITCHBOARD_NATS_REPLICAS: also rescales streams that exist with another count. */
  replicas?: number;
}

/** Both work-queue streams of the protocol, file-backed so a NATS restart keeps every message. */
export async function ensureStreams(jsm: JetStreamManager, names: NatsNames, opts: StreamOptions = {}): Promise<void> {
  const limits = opts.limits ?? DEFAULT_STREAM_LIMITS;
  const streams = [
    { name: names.jobsStream, subjects: [jobsWildcard(names.prefix)] },
    { name: names.resultsStream, subjects: [resultsWildcard(names.prefix)] },
  ];
  const bounds = { max_age: nanos(limits.maxAgeMs), max_bytes: limits.maxBytes, discard: DiscardPolicy.New };
  for (const s of streams) {
    try {
      const info = await jsm.streams.info(s.name);
      const c = info.config;
      const limitsDiffer = opts.enforce && (c.max_age !== bounds.max_age || c.max_bytes !== bounds.max_bytes || c.discard !== bounds.discard);
      const replicasDiffer = opts.replicas !== undefined && c.num_replicas !== opts.replicas;
      if (limitsDiffer || replicasDiffer) {
        await jsm.streams.update(s.name, { ...c, ...(opts.enforce ? bounds : {}), ...(opts.replicas ? { num_replicas: opts.replicas } : {}) });
      }
      continue;
    } catch (err) {
      if (!notFound(err)) throw err;
    }
    try {
      await jsm.streams.add({
        name: s.name,
        subjects: s.subjects,
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: nanos(120_000),
        num_replicas: opts.replicas ?? 1,
        ...bounds,
      });
    } catch (err) {
      // Another process created it between our look and our add.
      if (!/already in use|exists/i.test(String((err as Error).message))) throw err;
    }
  }
}

/** Messages waiting in the two streams, and results handed to a controller but not yet acknowledged. */
export interface StreamDepth {
  jobs: number;
  results: number;
  /** Results no controller has taken yet. */
  resultsPending: number;
  /** Results taken by a controller and not yet acknowledged (being recorded, or stranded by a crash). */
  resultsUnacked: number;
}

export async function streamDepth(jsm: JetStreamManager, names: NatsNames): Promise<StreamDepth> {
  const [jobs, results, consumer] = await Promise.all([
    jsm.streams.info(names.jobsStream),
    jsm.streams.info(names.resultsStream),
    jsm.consumers.info(names.resultsStream, names.resultsConsumer),
  ]);
  return {
    jobs: jobs.state.messages,
    results: results.state.messages,
    resultsPending: consumer.num_pending,
    resultsUnacked: consumer.num_ack_pending,
  };
}

async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  filter: string | undefined,
  ackWaitMs: number,
  maxAckPending: number,
): Promise<void> {
  const config = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    max_deliver: -1,
    max_ack_pending: maxAckPending,
    max_waiting: 2_048,
    ...(filter ? { filter_subject: filter } : {}),
  };
  try {
    const info = await jsm.consumers.info(stream, name);
    if (info.config.ack_wait !== config.ack_wait || info.config.max_ack_pending !== maxAckPending) {
      await jsm.consumers.update(stream, name, { ack_wait: config.ack_wait, max_ack_pending: maxAckPending });
    }
    return;
  } catch (err) {
    if (!notFound(err)) throw err;
  }
  try {
    await jsm.consumers.add(stream, config);
  } catch (err) {
    if (!/already in use|exists/i.test(String((err as Error).message))) throw err;
  }
}

/** Jobs a pool's agents may hold at once: far above any pool's sessions, it only stops a runaway. */
const POOL_MAX_ACK_PENDING = 20_000;

/** The durable pull consumer of one pool: its agents share it, so each job goes to one of them. */
export function ensurePoolConsumer(jsm: JetStreamManager, names: NatsNames, orgId: string, pool: string, ackWaitMs: number): Promise<void> {
  return ensureConsumer(jsm, names.jobsStream, poolConsumer(orgId, pool), jobsSubject(names.prefix, orgId, pool), ackWaitMs, POOL_MAX_ACK_PENDING);
}

/** The results consumer every controller replica shares: each event is recorded once. */
export function ensureResultsConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number, maxAckPending: number): Promise<void> {
  return ensureConsumer(jsm, names.resultsStream, names.resultsConsumer, undefined, ackWaitMs, maxAckPending);
}

/** Removes both streams (tests clean up their own namespace). */
export async function deleteStreams(jsm: JetStreamManager, names: NatsNames): Promise<void> {
  for (const stream of [names.jobsStream, names.resultsStream]) await jsm.streams.delete(stream).catch(() => undefined);
}
