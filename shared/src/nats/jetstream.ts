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
  for (const raw of url.split(',').map((s) => s.trim()).filter(Boolean)) {
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

/** Both work-queue streams of the protocol, file-backed so a NATS restart keeps every message. */
export async function ensureStreams(jsm: JetStreamManager, names: NatsNames): Promise<void> {
  const streams = [
    { name: names.jobsStream, subjects: [jobsWildcard(names.prefix)] },
    { name: names.resultsStream, subjects: [resultsWildcard(names.prefix)] },
  ];
  for (const s of streams) {
    try {
      await jsm.streams.info(s.name);
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
        discard: DiscardPolicy.Old,
        duplicate_window: nanos(120_000),
        num_replicas: 1,
      });
    } catch (err) {
      // Another process created it between our look and our add.
      if (!/already in use|exists/i.test(String((err as Error).message))) throw err;
    }
  }
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, name: string, filter: string | undefined, ackWaitMs: number): Promise<void> {
  const config = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    max_deliver: -1,
    max_ack_pending: 20_000,
    max_waiting: 2_048,
    ...(filter ? { filter_subject: filter } : {}),
  };
  try {
    const info = await jsm.consumers.info(stream, name);
    if (info.config.ack_wait !== config.ack_wait) await jsm.consumers.update(stream, name, { ack_wait: config.ack_wait });
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

/** The durable pull consumer of one pool: its agents share it, so each job goes to one of them. */
export function ensurePoolConsumer(jsm: JetStreamManager, names: NatsNames, orgId: string, pool: string, ackWaitMs: number): Promise<void> {
  return ensureConsumer(jsm, names.jobsStream, poolConsumer(orgId, pool), jobsSubject(names.prefix, orgId, pool), ackWaitMs);
}

/** The results consumer every controller replica shares: each event is recorded once. */
export function ensureResultsConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  return ensureConsumer(jsm, names.resultsStream, names.resultsConsumer, undefined, ackWaitMs);
}

/** Removes both streams (tests clean up their own namespace). */
export async function deleteStreams(jsm: JetStreamManager, names: NatsNames): Promise<void> {
  for (const stream of [names.jobsStream, names.resultsStream]) await jsm.streams.delete(stream).catch(() => undefined);
}
