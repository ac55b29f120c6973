import type { Logger } from 'pino';
import {
  Events,
  StringCodec,
  type ConnectionOptions,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import type { EventSink, IncomingEvent, JobTransport } from '../../../shared/src/jobs/link';
import { JETSTREAM_REQUIRED, jetStreamMissing } from '../../../shared/src/nats/jetstream-check';
import {
  connectNats,
  ensurePoolConsumer,
  ensureResultsConsumer,
  ensureStreams,
  streamDepth,
  type StreamDepth,
  type StreamLimits,
} from '../../../shared/src/nats/jetstream';
import { redactUrls } from '../../../shared/src/ops/redact';
import { isAgentInbox, jobsSubject, type NatsNames } from '../../../shared/src/nats/subjects';
import { ConfigError } from '../config';
import { ResultsGather } from './results-gather';

const sc = StringCodec();
const RECORDING_BATCHES = 2;
/**
 * A batch is recorded with a few statements per OUTCOMES_PER_TRANSACTION results whatever its
 * size, so under a steady stream of results (each recorded soon after it arrives) fewer than
 * GATHER.minResults wait up to GATHER_MS for more: that cuts the statements, and the database CPU,
 * per result. A results event carries up to 100 results, so the batches are sized by results
 * and bytes, not by events. Backups' events carry about 25 (their 256 KB fill first): at 20 ms a
 * batch was mostly one event; at 40 ms, with 64 outcomes a transaction, the backup bench made 30 %
 * fewer commits and ran about 3 % faster on the same floors, and a deployment still completed
 * 0.01 s after its last job.
 */
const GATHER = { minResults: 64, maxResults: 256, maxBytes: 4 * 1024 * 1024 };
const GATHER_MS = 40;
/**
 * Results the controllers may hold unacknowledged at once (all replicas together): what a
 * crashed controller can strand, until the ack wait hands it to another replica.
 */
const RESULTS_HELD = 1024;
/**
 * Bytes of agent events one controller holds at once: taken off the stream and not yet
 * acknowledged, plus what its outstanding pulls may still bring (the pull window). The count
 * alone let anybody who may publish on a results subject (any client of a NATS without per-agent
 * accounts, or any enrolled agent) make a controller hold RESULTS_HELD events of NATS's
 * max_payload, about 1 GB of buffers outside the 256 MB heap, before a single signature was
 * checked. A legitimate event carries at most 256 KB of results (RESULTS_MAX_BYTES in
 * agent/src/results.ts) but for one result larger alone, so 64 MiB still holds over 200 of the
 * largest common ones: a dozen recording batches (GATHER.maxBytes, two in flight), more than
 * recording can use at once, so a steady stream of results never waits on this bound; events of
 * short jobs and progress stay bound by RESULTS_HELD first. Past it the controller takes no more
 * until recording frees room, and the rest waits on the stream (see consumeResults). Each replica
 * holds its own.
 */
export const RESULTS_HELD_BYTES = 64 * 1024 * 1024;
/**
 * The pull window: bytes the consumer asks NATS for at a time (nats.js pulls again as they
 * arrive, whatever this process still holds). At least one event of NATS's max_payload plus its
 * headers, or an event larger than every pull would never be delivered and would block every
 * event behind it: a pull too small for the next event is ended by NATS and nats.js pulls again
 * with the whole window once the others are spent.
 */
const PULL_BYTES = 8 * 1024 * 1024;
const pullWindow = (maxPayload = 0) => Math.max(PULL_BYTES, maxPayload + 64 * 1024);
/**
 * How long the loop waits, at most, inside the consumer's iterator for recording to free room.
 * What nats.js delivered meanwhile waits there, not kept alive; past this (or the ack wait, after
 * which NATS hands those out again anyway) the iterator is dropped with them, and the consumer
 * taken again once there is room. Well under the 30 s after which nats.js, hearing nothing of
 * pulls it could not send, queues fresh whole-window pulls that would all go out at once.
 */
const PAUSE_MAX_MS = 10_000;
/**
 * Agent requests (heartbeats, backups to store, open jobs) being answered at once, and their
 * bytes: a deploy of thousands of devices has a few hundred backup requests out (up to 64
 * backups and 256 KB each, see BACKUP_STORE_MAX_BYTES); beyond this a request waits for its
 * agent to ask again (see start).
 */
const REQUESTS_HELD = 1024;
const REQUEST_BYTES_HELD = 16 * 1024 * 1024;
/** How soon the results consumer is taken again after it failed. */
const RESULTS_RETRY_MS = 500;
/**
 * Events waiting on the stream while this controller has taken none for this long (and may take
 * more): its pull is lost, and the consumer is taken again. nats.js notices a lost pull only after
 * two missed idle heartbeats, 30 s: a results consumer deleted and created again (by an operator,
 * or by a controller after a NATS lost its store) went 44 s without delivering.
 */
const RESULTS_STALL_MS = 5_000;

/** How this controller takes agent events off the results stream. */
export interface ResultsIntake {
  /**
   * How long NATS waits for a taken event's acknowledgement before handing it to another
   * replica. Events held here are kept alive with in-progress acks every third of it, so this
   * bounds only how long a crashed controller strands what it held, not how long recording may take.
   */
  ackWaitMs: number;
  limits: StreamLimits;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The client retries a NATS that does not answer for ever, which at start would hold the start hook
 * until fastify gives up with a stack trace (10 s). A start says instead, in one line, what to do;
 * a connection that comes up after that is closed.
 */
const FIRST_CONNECT_MS = 8_000;

async function firstConnect(connecting: Promise<NatsConnection>, url: string): Promise<NatsConnection> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void connecting.then(
        (late) => late.close(),
        () => undefined,
      );
      reject(
        new ConfigError(
          `NATS_URL: no NATS server answered at ${url} within ${FIRST_CONNECT_MS / 1000} s; start one with JetStream (nats-server -js) or correct NATS_URL`,
        ),
      );
    }, FIRST_CONNECT_MS);
  });
  try {
    return await Promise.race([connecting, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * JetStream transport of the controller: publishes jobs to the pools' work queues and records
 * agent events from the results work queue through the durable consumer all replicas share.
 */
export class NatsJobTransport implements JobTransport {
  readonly name = 'nats' as const;
  private nc: NatsConnection | null = null;
  private js!: JetStreamClient;
  private jsm!: JetStreamManager;
  private readonly pools = new Set<string>();
  private closed = false;
  private current: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  /** The batch of agent events being recorded right now (close() lets it finish). */
  private recording: Promise<void> | null = null;
  /** Events taken off the stream and not yet acked or naked: kept alive while they wait. */
  private readonly held = new Set<JsMsg>();
  private heldBytes = 0;
  /** Bytes held beyond which the loop takes no more (RESULTS_HELD_BYTES less the pull window). */
  private heldLimit = RESULTS_HELD_BYTES - PULL_BYTES;
  /** Wakes the loop waiting for room (see room); null while it is not waiting. */
  private roomFreed: (() => void) | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  private stallWatch: NodeJS.Timeout | null = null;
  /** When the results consumer last handed this controller an event (or was taken). */
  private lastTaken = Date.now();

  constructor(
    private readonly url: string,
    private readonly names: NatsNames,
    private readonly ackWaitMs: number,
    private readonly intake: ResultsIntake,
    private readonly log: Logger,
    private readonly replicas = 1,
    /** Operator mode: the controller's own user JWT and inbox prefix. */
    private readonly auth?: () => Promise<Partial<ConnectionOptions>>,
  ) {}

  /** Agent requests dropped unanswered since the start, because too many were being answered already (see start). */
  requestsDropped = 0;
  /** Most bytes of agent events held at once since the start (RESULTS_HELD_BYTES bounds it). */
  resultsBytesHeldPeak = 0;
  /** Times this controller stopped taking agent events because it held RESULTS_HELD_BYTES of them (with the pull window). */
  resultsPauses = 0;

  /** Bytes of agent events taken off the stream and not yet acked or naked. */
  get resultsBytesHeld(): number {
    return this.heldBytes;
  }

  /** The NATS connection once started (readiness checks and metrics). */
  get connection(): NatsConnection | undefined {
    return this.nc ?? undefined;
  }

  /** Connects and sets up the streams; publishing alone (a submit-only process) needs no more. */
  async connect(): Promise<void> {
    if (this.nc) return;
    let nc: NatsConnection;
    try {
      nc = await firstConnect(connectNats(this.url, 'switchboard-controller', await this.auth?.()), redactUrls(this.url));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`NATS_URL: cannot connect to ${redactUrls(this.url)}: ${(err as Error).message}`);
    }
    this.nc = nc;
    this.jsm = await nc.jetstreamManager().catch((err: unknown) => {
      void nc.close();
      this.nc = null;
      throw jetStreamMissing(err) ? new ConfigError(`NATS_URL: ${JETSTREAM_REQUIRED(redactUrls(this.url))}`) : err;
    });
    this.js = nc.jetstream();
    await this.ensureStreams().catch((err: Error) => {
      if (this.replicas === 1) throw err;
      throw new ConfigError(
        `SWITCHBOARD_NATS_REPLICAS=${this.replicas}: cannot set up the job streams (${err.message}); ${this.replicas} replicas need a NATS ` +
          `cluster with JetStream on at least ${this.replicas} servers`,
      );
    });
  }

  private ensureStreams(): Promise<void> {
    return ensureStreams(this.jsm, this.names, { limits: this.intake.limits, enforce: true, replicas: this.replicas });
  }

  async resultsBacklog(): Promise<number> {
    const depth = await this.depth();
    return depth ? depth.resultsPending + depth.resultsUnacked : 0;
  }

  /** Depth of the job and result streams (metrics); undefined before connecting. */
  async depth(): Promise<StreamDepth | undefined> {
    return this.nc ? streamDepth(this.jsm, this.names) : undefined;
  }

  async start(sink: EventSink): Promise<void> {
    await this.connect();
    await ensureResultsConsumer(this.jsm, this.names, this.intake.ackWaitMs, RESULTS_HELD);
    this.keepAlive = setInterval(() => this.held.forEach((m) => m.working()), Math.max(100, Math.floor(this.intake.ackWaitMs / 3)));
    void (async () => {
      for await (const status of this.nc!.status()) {
        if (status.type === Events.Disconnect || status.type === Events.Reconnect)
          this.log.warn({ nats: status.type, server: status.data }, 'NATS connection ' + status.type);
        // After a reconnect nats.js reads the consumer back before it pulls again, and when that
        // read fails (a cluster still electing leaders) it waits a random 15 to 45 s (around the pull
        // request's 30 s expiry) before it tries again: killing the controller's node and then an
        // agent's stalled result recording for 42 s (cluster bench). The loop of consumeResults
        // takes a new consumer instead, retrying every RESULTS_RETRY_MS.
        if (status.type === Events.Reconnect) this.retakeResults();
      }
    })();
    // Requests are core NATS: nothing holds them back but what this controller answers, so a flood
    // (any agent can publish as fast as its link goes) would pile up unanswered requests on the heap
    // until the process died. Beyond REQUESTS_HELD requests or REQUEST_BYTES_HELD bytes being
    // answered, a request is dropped unanswered: its agent asks again (a heartbeat at its next beat,
    // a backup or open jobs request shortly), and another replica of the queue group may take it.
    const inFlight = { count: 0, bytes: 0 };
    this.nc!.subscribe(this.names.heartbeatSubject, {
      queue: this.names.controllerQueue,
      callback: (err, msg) => {
        if (err || !isAgentInbox(msg.reply)) return; // see isAgentInbox
        const bytes = msg.data.length;
        if (inFlight.count >= REQUESTS_HELD || inFlight.bytes + bytes > REQUEST_BYTES_HELD) {
          if (this.requestsDropped++ % 1000 === 0)
            this.log.warn({ dropped: this.requestsDropped }, 'agent requests arrive faster than they are answered; dropping some unanswered');
          return;
        }
        inFlight.count += 1;
        inFlight.bytes += bytes;
        sink
          .request(sc.decode(msg.data))
          .then(
            (reply) => msg.respond(sc.encode(reply)),
            (e) => this.log.warn({ err: e }, 'heartbeat not recorded'),
          )
          .finally(() => {
            inFlight.count -= 1;
            inFlight.bytes -= bytes;
          });
      },
    });
    this.loop = this.consumeResults(sink);
    this.stallWatch = setInterval(() => void this.watchStall(), RESULTS_STALL_MS);
    this.stallWatch.unref();
  }

  /** Takes the results consumer again when events wait that it no longer hands out (RESULTS_STALL_MS). */
  private async watchStall(): Promise<void> {
    // Waiting for room is not stalled: the loop takes events again itself once recording frees some.
    if (this.closed || this.roomFreed || Date.now() - this.lastTaken < RESULTS_STALL_MS) return;
    const info = await this.jsm.consumers.info(this.names.resultsStream, this.names.resultsConsumer).catch(() => null);
    if (!info || info.num_pending === 0 || info.num_ack_pending >= (info.config.max_ack_pending ?? Infinity)) return;
    if (Date.now() - this.lastTaken < RESULTS_STALL_MS) return;
    this.log.warn(
      { waiting: info.num_pending },
      `agent events wait on the stream but none came for ${RESULTS_STALL_MS / 1000} s; taking the results consumer again`,
    );
    this.retakeResults();
  }

  /** Ends the consumer's iterator: the loop of consumeResults takes the consumer again. */
  private retakeResults(): void {
    this.lastTaken = Date.now();
    this.current?.stop();
  }

  private get full(): boolean {
    return this.heldBytes > this.heldLimit;
  }

  /** Room again once a quarter of the limit is recorded: a flood pauses the loop every few MiB, not at every event. */
  private get roomy(): boolean {
    return this.heldBytes <= this.heldLimit * 0.75;
  }

  private take(m: JsMsg): void {
    this.held.add(m);
    this.heldBytes += m.data.byteLength;
    this.resultsBytesHeldPeak = Math.max(this.resultsBytesHeldPeak, this.heldBytes);
  }

  private release(m: JsMsg): void {
    if (!this.held.delete(m)) return;
    this.heldBytes -= m.data.byteLength;
    if (this.roomy) this.roomFreed?.();
  }

  /** Resolves true once there is room (or at close), false when `ms` passed first. */
  private room(ms = Infinity): Promise<boolean> {
    if (this.roomy || this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => done(false), ms) : undefined;
      const done = (roomy: boolean) => {
        clearTimeout(timer);
        this.roomFreed = null;
        resolve(roomy);
      };
      this.roomFreed = () => done(true);
    });
  }

  private async consumeResults(sink: EventSink): Promise<void> {
    const buffer = new ResultsGather<JsMsg>(GATHER);
    const inFlight = new Set<Promise<void>>();
    // Batches recorded at once: while one waits on the database, the next is verified and
    // its progress written. Events of one job may land in two batches; the recorder takes
    // them in any order (a late 'started' never reopens a final job).
    let gathering: NodeJS.Timeout | null = null;
    const kick = (gathered = false) => {
      while (inFlight.size < RECORDING_BATCHES && buffer.size > 0) {
        if (!gathered && !buffer.full) {
          gathering ??= setTimeout(() => {
            gathering = null;
            kick(true);
          }, GATHER_MS);
          break;
        }
        const batch = buffer.take().map((m) => this.toEvent(m));
        const recording: Promise<void> = sink
          .events(batch)
          .catch((err) => {
            this.log.error({ err }, 'recording agent events failed');
            batch.forEach((e) => e.nak(1000));
          })
          .finally(() => {
            inFlight.delete(recording);
            kick();
          });
        inFlight.add(recording);
      }
      this.recording = inFlight.size > 0 ? Promise.all(inFlight).then(() => undefined) : null;
    };
    const pauseMs = Math.min(this.intake.ackWaitMs, PAUSE_MAX_MS);
    while (!this.closed) {
      try {
        // After a long pause (below) the consumer is taken again only once there is room.
        await this.room();
        if (this.closed) break;
        const consumer = await this.js.consumers.get(this.names.resultsStream, this.names.resultsConsumer);
        // Every event taken is held (kept alive) at once: nats.js keeps pulling as events arrive,
        // not as they are recorded, so an event left waiting inside the iterator would expire
        // and go to another replica. The consumer's max_ack_pending bounds how many are held,
        // RESULTS_HELD_BYTES their bytes: the pulls ask for a window of bytes (nats.js then pulls
        // up to 100 events at a time), and the loop stops taking events, so no more pulls go out
        // (nats.js sends a pull only as the iterator reaches it), once the held bytes and the
        // window reach RESULTS_HELD_BYTES.
        const window = pullWindow(this.nc?.info?.max_payload);
        this.heldLimit = Math.max(0, RESULTS_HELD_BYTES - window);
        const messages = await consumer.consume({ max_bytes: window });
        this.current = messages;
        this.lastTaken = Date.now();
        for await (const m of messages) {
          this.lastTaken = Date.now();
          this.take(m);
          buffer.add(m, m.data);
          kick();
          if (this.full) {
            this.resultsPauses += 1;
            if (this.resultsPauses % 100 === 1)
              this.log.warn(
                { held_bytes: this.heldBytes, pauses: this.resultsPauses },
                'agent events arrive faster than they are recorded; taking no more until some are',
              );
            // Nothing is lost past a long pause: what the iterator held goes back to the stream
            // at its ack wait, and exactly-once recording makes a copy taken twice harmless.
            if (!(await this.room(pauseMs))) {
              this.log.warn(
                { held_bytes: this.heldBytes },
                `recording freed no room for ${pauseMs / 1000} s; the results consumer is taken again once it does`,
              );
              break;
            }
          }
        }
      } catch (err) {
        if (this.closed) break;
        this.log.warn({ err: (err as Error).message }, 'results consumer interrupted; retrying');
        await sleep(RESULTS_RETRY_MS);
        // The stream or consumer may be gone (a NATS without its store): set them up again, and
        // the pools' consumers at their next job (agents in operator mode may not create them).
        this.pools.clear();
        await this.ensureStreams().catch(() => undefined);
        await ensureResultsConsumer(this.jsm, this.names, this.intake.ackWaitMs, RESULTS_HELD).catch(() => undefined);
      }
    }
  }

  async publishJob(orgId: string, pool: string, token: string, msgId: string): Promise<number> {
    await this.ensurePool(orgId, pool);
    const ack = await this.js.publish(jobsSubject(this.names.prefix, orgId, pool), sc.encode(token), { msgID: msgId, timeout: 5_000 });
    return ack.seq;
  }

  /** The pool's consumer; only controllers create consumers (operator mode refuses it to agents). */
  async ensurePool(orgId: string, pool: string): Promise<void> {
    await this.connect();
    const key = `${orgId}/${pool}`;
    if (this.pools.has(key)) return;
    await ensurePoolConsumer(this.jsm, this.names, orgId, pool, this.ackWaitMs);
    this.pools.add(key);
  }

  async retractJob(seq: number): Promise<void> {
    await this.jsm?.streams.deleteMessage(this.names.jobsStream, seq, false).catch(() => undefined);
  }

  private toEvent(m: JsMsg): IncomingEvent {
    return {
      token: sc.decode(m.data),
      redeliveries: Math.max(0, m.info.redeliveryCount - 1),
      ack: () => {
        this.release(m);
        m.ack();
      },
      nak: (delayMs) => {
        this.release(m);
        m.nak(delayMs);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.current?.stop();
    this.roomFreed?.();
    // Graceful: no more events are taken; those already taken are recorded and acked before
    // the connection goes (bounded, so a NATS or database outage cannot hold a shutdown).
    await within(this.loop, 5_000);
    const end = Date.now() + 15_000;
    while (this.recording && Date.now() < end) await within(this.recording, end - Date.now());
    if (this.nc && !this.nc.isClosed()) {
      await within(this.nc.flush(), 2_000);
      await this.nc.close();
    }
    await this.loop?.catch(() => undefined);
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (this.stallWatch) clearInterval(this.stallWatch);
  }
}

/** Waits for a promise (errors ignored), at most `ms`. */
async function within(promise: Promise<unknown> | null, ms: number): Promise<void> {
  if (!promise) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
