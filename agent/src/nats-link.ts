import { StringCodec, jwtAuthenticator, type Consumer, type JsMsg, type NatsConnection } from 'nats';
import type { AgentLink, DeliveredJob } from '../../shared/src/jobs/link';
import { connectNats, ensurePoolConsumer, ensureStreams } from '../../shared/src/nats/jetstream';
import { natsNames } from '../../shared/src/nats/subjects';

const sc = StringCodec();

export interface NatsLinkIdentity {
  agent_id: string;
  org_id: string;
  name: string;
  pool: string;
  nats: {
    prefix: string;
    jobs_stream: string;
    jobs_consumer: string;
    results_subject: string;
    heartbeat_subject: string;
    ack_wait_ms: number;
    /** Replies to this agent go to its own inbox prefix, which only it may read (operator mode, deploy/nats-server.conf). */
    inbox_prefix?: string;
  };
}

/** NATS operator mode: the agent's user JWT (read at every connect, so a renewed one is used) and nkey seed. */
export interface NatsUserAuth {
  jwt(): string;
  seed: Uint8Array;
}

/**
 * The agent's end of the NATS transport: pulls from its pool's durable consumer (shared with
 * the pool's other agents), publishes events to the results stream with deduplication ids,
 * heartbeats by request/reply. Reconnects forever; a NATS restart only delays things.
 * With `auth` (operator mode) it connects as its own NATS user, which may not create streams or
 * consumers: the controller creates them, the agent waits for them.
 */
export async function natsAgentLink(
  url: string,
  identity: NatsLinkIdentity,
  auth?: NatsUserAuth,
): Promise<AgentLink & { connection: NatsConnection }> {
  const nc = await connectNats(
    url,
    `switchboard-agent ${identity.name} (${identity.agent_id})`,
    // Its own inbox prefix (agents enrolled before there was one keep the default).
    { inboxPrefix: identity.nats.inbox_prefix, ...(auth ? { authenticator: jwtAuthenticator(auth.jwt, auth.seed) } : {}) },
  );
  const js = nc.jetstream();
  const names = natsNames(identity.nats.prefix);
  const ackWaitMs = identity.nats.ack_wait_ms;
  const ensure = async () => {
    if (auth) return;
    const jsm = await nc.jetstreamManager();
    await ensureStreams(jsm, names);
    await ensurePoolConsumer(jsm, names, identity.org_id, identity.pool, ackWaitMs);
  };
  await ensure();
  const poolConsumer = () => js.consumers.get(identity.nats.jobs_stream, identity.nats.jobs_consumer);
  let consumer: Consumer | null = auth ? null : await poolConsumer();

  const wrap = (m: JsMsg): DeliveredJob => ({
    token: sc.decode(m.data),
    redeliveries: Math.max(0, m.info.redeliveryCount - 1),
    working: () => m.working(),
    ack: () => m.ack(),
    term: () => m.term(),
    nak: () => m.nak(),
  });

  return {
    /** For the agent's health checks and metrics. */
    connection: nc,
    ackWaitMs,
    async pull(max, waitMs, onJob) {
      try {
        consumer ??= await poolConsumer();
        const messages = await consumer.fetch({ max_messages: max, expires: Math.max(1_000, waitMs) });
        for await (const m of messages) onJob(wrap(m));
      } catch (err) {
        // The consumer or stream may be gone (a NATS that lost its store): set them up again.
        if (/not found/i.test(String((err as Error).message))) {
          await ensure();
          consumer = auth ? null : await poolConsumer();
        }
        throw err;
      }
    },
    async publish(token, id) {
      await js.publish(identity.nats.results_subject, sc.encode(token), { msgID: id, timeout: 5_000 });
    },
    async request(token, timeoutMs) {
      try {
        const reply = await nc.request(identity.nats.heartbeat_subject, sc.encode(token), { timeout: timeoutMs });
        return sc.decode(reply.data);
      } catch {
        return null;
      }
    },
    async close() {
      if (!nc.isClosed()) await nc.close();
    },
  };
}
