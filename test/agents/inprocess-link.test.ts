/**
 * The in-process agent link once its hub closes (the controller's job engine stopped): a pull
 * waiting at that moment and every later pull reject with LinkClosedError instead of answering
 * "no jobs" at once, and an agent runtime pulling over it stops its pull loop instead of
 * spinning. No controller or database: the hub and the runtime alone. Every wait below is on a
 * promise; nothing depends on timing.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DRIVERS } from '../../agent/src/drivers';
import { AgentRuntime } from '../../agent/src/runtime';
import { controllerKeyFromSecret, generateAgentKeys } from '../../shared/src/jobs/crypto';
import { InProcessHub } from '../../shared/src/jobs/inprocess';
import { LinkClosedError, type AgentLink, type DeliveredJob, type EventSink } from '../../shared/src/jobs/link';

const ORG = 'org-1';
const POOL = 'default';
/** Longer than any test may take: a pull that returns before this was ended, not timed out. */
const LONG_WAIT_MS = 10 * 60_000;

const sink: EventSink = {
  async events(batch) {
    for (const e of batch) e.ack();
  },
  async request() {
    return 'unused';
  },
};

async function startedHub(): Promise<InProcessHub> {
  const hub = new InProcessHub();
  await hub.start(sink);
  return hub;
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The promise itself, marked as handled so that rejecting before the test awaits it is no "unhandled rejection". */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/** A pull with nothing queued: it waits (far longer than any test) until something ends it. */
const waitingPull = (link: AgentLink) => handled(link.pull(8, LONG_WAIT_MS, () => undefined));

describe('in-process agent link', () => {
  it('hands out queued jobs while open', async () => {
    const hub = await startedHub();
    const link = hub.link(ORG, POOL);
    await hub.publishJob(ORG, POOL, 'job-1');
    const got: DeliveredJob[] = [];
    await link.pull(8, LONG_WAIT_MS, (job) => got.push(job));
    expect(got.map((j) => j.token)).toEqual(['job-1']);
    await hub.close();
  });

  it.each([
    { closing: 'the hub', close: (hub: InProcessHub) => hub.close(), message: /in-process job hub is closed/ },
    { closing: 'the link', close: (_hub: InProcessHub, link: AgentLink) => link.close(), message: /in-process agent link is closed/ },
  ])('closing $closing ends a waiting pull with LinkClosedError, and every later pull too', async ({ close, message }) => {
    const hub = await startedHub();
    const link = hub.link(ORG, POOL);
    const waiting = waitingPull(link);
    await close(hub, link);
    await expect(waiting).rejects.toThrow(LinkClosedError);
    await expect(waiting).rejects.toThrow(message);
    // Before the fix these answered "no jobs" at once, which a pull loop turns into a busy loop.
    for (let i = 0; i < 3; i++) await expect(waitingPull(link)).rejects.toThrow(LinkClosedError);
    await hub.close();
  });

  it('an agent runtime pulling when the hub closes stops its pull loop instead of spinning', async () => {
    const hub = await startedHub();
    const inner = hub.link(ORG, POOL);
    let hubClosed = false;
    let pulls = 0;
    let pullsAfterClose = 0;
    const firstPull = deferred<{ pull: Promise<void> }>();
    // The agent's link: counts pulls. A pull started after the hub closed is parked until the link
    // closes, so that the old behaviour (an endless run of empty pulls) fails this test, not hangs it.
    const parked = deferred();
    const link: AgentLink = {
      ackWaitMs: inner.ackWaitMs,
      pull(max, waitMs, onJob) {
        pulls += 1;
        if (hubClosed) {
          pullsAfterClose += 1;
          return parked.promise;
        }
        const p = inner.pull(max, waitMs, onJob);
        if (pulls === 1) firstPull.resolve({ pull: handled(p) });
        return p;
      },
      publish: (token, id) => inner.publish(token, id),
      request: async () => null,
      close: async () => {
        parked.resolve();
        await inner.close();
      },
    };
    const logLines: { msg: string; level: number }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
    const keys = await generateAgentKeys();
    const runtime = new AgentRuntime({
      identity: {
        agent_id: 'agent-1',
        org_id: ORG,
        pool: POOL,
        private_jwk: keys.privateJwk,
        controller_key: controllerKeyFromSecret(randomBytes(32)).publicJwk,
        // Short, so that stop() never waits out a heartbeat round begun just before it.
        heartbeat_interval_ms: 50,
      },
      link,
      drivers: DRIVERS,
      concurrency: 4,
      connectConcurrency: 4,
      version: 'test',
      log: log as never,
    });
    await runtime.start();
    // The pull loop is the first of the runtime's loops (the other beats the heart); its promise
    // settles only when the loop returns.
    const loops = (runtime as unknown as { loops: Promise<void>[] }).loops;
    expect(loops[0]).toBeInstanceOf(Promise);
    const pullLoop = loops[0];

    const inFlight = await firstPull.promise; // the agent is waiting for jobs
    hubClosed = true;
    await hub.close();
    await expect(inFlight.pull).rejects.toThrow(LinkClosedError);

    // The loop returns by itself, before stop() is called, after no further pull.
    await expect(pullLoop).resolves.toBeUndefined();
    expect(pulls).toBe(1);
    expect(pullsAfterClose).toBe(0);
    expect(logLines.map((l) => l.msg)).toContain('job link closed; no longer pulling jobs');
    expect(logLines.map((l) => l.msg)).not.toContain('pulling jobs failed; retrying');

    await runtime.stop(0);
  });
});
