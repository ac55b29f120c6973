/**
 * An AgentLink across a thread boundary: the controller serves an agent link it holds (the
 * in-process hub's) on one end of a MessageChannel, and an agent running in a worker thread uses
 * `portLink` on the other end as if it were that link. Only the AgentLink interface crosses,
 * as plain structured-clone messages (tokens are strings), so any link can be served this way.
 *
 * Jobs handed to the thread and not yet acked, termed or naked when the port closes (the thread
 * crashed or was stopped) are naked on the controller's side: back in their queue for the
 * thread's successor, the in-process counterpart of a JetStream ack-wait expiry. The engine
 * records each job's result once, so a job run again after its result was published is harmless.
 */
import type { MessagePort } from 'node:worker_threads';
import { LinkClosedError, type AgentLink, type DeliveredJob } from './link';

type Settle = 'working' | 'ack' | 'term' | 'nak';

/** Omit over each member of a union (plain Omit merges them). */
type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** From the agent's thread to the served link. */
type ToLink =
  | { op: 'pull'; call: number; max: number; waitMs: number }
  | { op: 'publish'; call: number; token: string; id: string }
  | { op: 'request'; call: number; token: string; timeoutMs: number }
  | { op: 'close'; call: number }
  | { op: 'settle'; job: number; how: Settle };

/** From the served link to the agent's thread. */
type ToAgent =
  | { op: 'job'; call: number; job: number; token: string; redeliveries: number }
  | { op: 'reply'; call: number; value?: string | null; error?: { message: string; closed: boolean } };

export interface ServedLink {
  /** Naks the jobs the thread still holds, closes the port and the served link. */
  close(): Promise<void>;
}

/** Serves `link` to the agent at the other end of `port`. */
export function serveLinkOverPort(link: AgentLink, port: MessagePort): ServedLink {
  const held = new Map<number, DeliveredJob>();
  let nextJob = 0;
  let open = true;
  const send = (message: ToAgent) => {
    if (open) port.postMessage(message);
  };
  const answer = (call: number, work: Promise<string | null | void>) =>
    work.then(
      (value) => send({ op: 'reply', call, value: value ?? null }),
      (err: Error) => send({ op: 'reply', call, error: { message: err.message, closed: err instanceof LinkClosedError } }),
    );
  const hand = (call: number, job: DeliveredJob) => {
    if (!open) return job.nak(); // the thread is gone: back to the queue at once
    const id = ++nextJob;
    held.set(id, job);
    send({ op: 'job', call, job: id, token: job.token, redeliveries: job.redeliveries });
  };
  const settle = (id: number, how: Settle) => {
    const job = held.get(id);
    if (!job) return;
    if (how !== 'working') held.delete(id);
    job[how]();
  };
  const close = async () => {
    if (!open) return;
    open = false;
    for (const job of held.values()) job.nak();
    held.clear();
    port.close();
    await link.close().catch(() => undefined);
  };
  port.on('message', (m: ToLink) => {
    switch (m.op) {
      case 'pull':
        return void answer(
          m.call,
          link.pull(m.max, m.waitMs, (job) => hand(m.call, job)),
        );
      case 'publish':
        return void answer(m.call, link.publish(m.token, m.id));
      case 'request':
        return void answer(m.call, link.request(m.token, m.timeoutMs));
      case 'close':
        return void answer(m.call, close());
      case 'settle':
        return settle(m.job, m.how);
    }
  });
  port.on('close', () => void close());
  return { close };
}

/** The agent's end: an AgentLink over `port`, served by serveLinkOverPort with the given ack wait. */
export function portLink(port: MessagePort, ackWaitMs: number): AgentLink {
  const calls = new Map<number, { resolve(value: string | null): void; reject(err: Error): void; onJob?: (job: DeliveredJob) => void }>();
  let nextCall = 0;
  let closed = false;
  const post = (message: ToLink) => port.postMessage(message);
  const call = (message: Without<Extract<ToLink, { call: number }>, 'call'>, onJob?: (job: DeliveredJob) => void) =>
    new Promise<string | null>((resolve, reject) => {
      if (closed) return reject(new LinkClosedError('the agent thread link is closed'));
      const id = ++nextCall;
      calls.set(id, { resolve, reject, onJob });
      post({ ...message, call: id } as ToLink);
    });
  const delivered = (m: Extract<ToAgent, { op: 'job' }>): DeliveredJob => {
    const settle = (how: Settle) => () => {
      if (!closed) post({ op: 'settle', job: m.job, how });
    };
    return { token: m.token, redeliveries: m.redeliveries, working: settle('working'), ack: settle('ack'), term: settle('term'), nak: settle('nak') };
  };
  const endAll = () => {
    closed = true;
    for (const pending of calls.values()) pending.reject(new LinkClosedError('the controller closed the agent thread link'));
    calls.clear();
  };
  port.on('message', (m: ToAgent) => {
    const pending = calls.get(m.call);
    if (!pending) return;
    if (m.op === 'job') return pending.onJob?.(delivered(m));
    calls.delete(m.call);
    if (!m.error) return pending.resolve(m.value ?? null);
    pending.reject(m.error.closed ? new LinkClosedError(m.error.message) : new Error(m.error.message));
  });
  port.on('close', endAll);
  return {
    ackWaitMs,
    async pull(max, waitMs, onJob) {
      await call({ op: 'pull', max, waitMs }, onJob);
    },
    async publish(token, id) {
      await call({ op: 'publish', token, id });
    },
    request: (token, timeoutMs) => call({ op: 'request', token, timeoutMs }),
    async close() {
      if (closed) return;
      await call({ op: 'close' }).catch(() => undefined);
      endAll();
      port.close();
    },
  };
}
