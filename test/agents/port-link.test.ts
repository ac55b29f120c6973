/**
 * The agent link across a thread boundary (shared/src/jobs/port-link.ts), over a MessageChannel
 * in this thread: it hands out the served hub's jobs and carries the agent's events back; jobs
 * the far end still held when its port closed (a crashed agent thread) go back to the queue
 * with one more redelivery, acked ones do not; a closed hub ends pulls with LinkClosedError.
 * Every wait is on a promise.
 */
import { MessageChannel } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { InProcessHub } from '../../shared/src/jobs/inprocess';
import { LinkClosedError, type DeliveredJob, type EventSink } from '../../shared/src/jobs/link';
import { portLink, serveLinkOverPort } from '../../shared/src/jobs/port-link';

const ORG = 'org-1';
const POOL = 'default';
const LONG_WAIT_MS = 10 * 60_000;

async function setUp() {
  const events: string[] = [];
  const sink: EventSink = {
    async events(batch) {
      for (const e of batch) {
        events.push(e.token);
        e.ack();
      }
    },
    async request(token) {
      return `reply to ${token}`;
    },
  };
  const hub = new InProcessHub();
  await hub.start(sink);
  const { port1, port2 } = new MessageChannel();
  const served = serveLinkOverPort(hub.link(ORG, POOL), port1);
  return { hub, served, events, link: portLink(port2, 1234), port: port2 };
}

async function pullAll(link: ReturnType<typeof portLink>, count: number): Promise<DeliveredJob[]> {
  const got: DeliveredJob[] = [];
  while (got.length < count) await link.pull(count - got.length, LONG_WAIT_MS, (job) => got.push(job));
  return got;
}

it('hands out jobs, carries events and requests back', async () => {
  const { hub, served, events, link } = await setUp();
  await hub.publishJob(ORG, POOL, 'job-1');
  await hub.publishJob(ORG, POOL, 'job-2');
  const jobs = await pullAll(link, 2);
  expect(jobs.map((j) => [j.token, j.redeliveries])).toEqual([
    ['job-1', 0],
    ['job-2', 0],
  ]);
  expect(link.ackWaitMs).toBe(1234);
  await link.publish('result-1', 'id-1');
  expect(events).toEqual(['result-1']);
  expect(await link.request('beat', 1_000)).toBe('reply to beat');
  await served.close();
  await hub.close();
});

it('puts back the jobs a closed far end still held, not the acked ones', async () => {
  const { hub, events, link, port } = await setUp();
  for (const token of ['a', 'b', 'c']) await hub.publishJob(ORG, POOL, token);
  const jobs = await pullAll(link, 3);
  jobs[0].ack();
  jobs[1].working();
  await link.publish('flush', 'flush'); // messages on the port arrive in order: the ack is settled by now
  expect(events).toEqual(['flush']);
  port.close(); // the agent thread is gone
  const next = await setUpOnHub(hub);
  const again = await pullAll(next, 2);
  expect(again.map((j) => [j.token, j.redeliveries]).sort()).toEqual([
    ['b', 1],
    ['c', 1],
  ]);
  await hub.close();
});

it('ends pulls with LinkClosedError once the hub closes', async () => {
  const { hub, link } = await setUp();
  const waiting = link.pull(8, LONG_WAIT_MS, () => undefined);
  waiting.catch(() => undefined);
  await hub.close();
  await expect(waiting).rejects.toThrow(LinkClosedError);
  await expect(waiting).rejects.toThrow(/in-process job hub is closed/);
});

/** A second agent end served from the same hub (the restarted thread's). */
async function setUpOnHub(hub: InProcessHub) {
  const { port1, port2 } = new MessageChannel();
  serveLinkOverPort(hub.link(ORG, POOL), port1);
  return portLink(port2, 1234);
}
