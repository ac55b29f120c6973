/**
 * The two ends of a job transport. The controller's job engine talks to a `JobTransport`, an
 * agent's runner to an `AgentLink`; NATS JetStream and the in-process hub both implement them,
 * so the same engine and the same runner work in the all-in-one process and across sites.
 */

/** One job message handed to an agent: a batch of jobs of its pool (see JobBatch). */
export interface DeliveredJob {
  /** Controller-signed compact JWS of a JobBatch. */
  token: string;
  /** How many times this message was handed out before (0 on first delivery). */
  redeliveries: number;
  /** Tells the transport the job is still running so it is not handed to another agent. */
  working(): void;
  /** Done with the message (every job of it has a stored result, or needs none). */
  ack(): void;
  /** Drop the message for good (not meant for this agent, or stale). */
  term(): void;
  /** Give it back at once, for another agent of the pool. */
  nak(): void;
}

/**
 * What `AgentLink.pull` rejects with once the link, or the transport behind it, is closed for
 * good: no job will ever come through it again, so the caller stops pulling (the in-process
 * hub after the controller's job engine stopped; the NATS link reconnects instead).
 */
export class LinkClosedError extends Error {
  readonly code = 'LINK_CLOSED';
  constructor(message: string) {
    super(message);
    this.name = 'LinkClosedError';
  }
}

export interface AgentLink {
  /** Redelivery interval of a job whose agent stops calling working(). */
  readonly ackWaitMs: number;
  /**
   * Pulls up to `max` job messages (batches), waiting up to `waitMs`; each is handed to onJob as it arrives.
   * Rejects with LinkClosedError once the link can never deliver again.
   */
  pull(max: number, waitMs: number, onJob: (job: DeliveredJob) => void): Promise<void>;
  /** Durable publish of an agent event (resolves once stored); `id` deduplicates retries. */
  publish(token: string, id: string): Promise<void>;
  /**
   * A request to the controllers (a heartbeat, a pre-deployment backup to store, which jobs of a
   * redelivered batch are still open); resolves to
   * the controller's signed reply, or null when none answered.
   */
  request(token: string, timeoutMs: number): Promise<string | null>;
  close(): Promise<void>;
}

/** One agent event handed to the controller. */
export interface IncomingEvent {
  /** Agent-signed JWS of an AgentEvent, with its payload unencoded and detached (RFC 7797). */
  token: string;
  /** How many times it was delivered before. */
  redeliveries: number;
  ack(): void;
  /** Hand it out again later (recording it failed). */
  nak(delayMs?: number): void;
}

export interface EventSink {
  /** Records a batch of events; acks or naks each one. */
  events(batch: IncomingEvent[]): Promise<void>;
  /** Answers an agent request (heartbeat, pre-deployment backup) with a signed reply. */
  request(token: string): Promise<string>;
}

export interface JobTransport {
  readonly name: 'nats' | 'inprocess';
  /** Starts delivering events and heartbeats to the sink. */
  start(sink: EventSink): Promise<void>;
  /** Durable publish of a job batch to a pool; answers the stream sequence (null when there is none). */
  publishJob(orgId: string, pool: string, token: string, msgId: string): Promise<number | null>;
  /** Removes a job batch that no agent should run any more (best effort). */
  retractJob(seq: number): Promise<void>;
  /**
   * Agent events stored but not yet recorded (taken by no controller, or held by one, perhaps
   * one that crashed); absent where events cannot wait outside the controller's process.
   */
  resultsBacklog?(): Promise<number>;
  close(): Promise<void>;
}
