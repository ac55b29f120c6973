/**
 * How the controller sizes the batches of agent events it records at once: by the results the
 * events carry (an event holds from one progress line to a hundred results) and their bytes,
 * not by the count of events. The events are real signed results events.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { AGENT_SIGN_ALG, generateAgentKeys, importAgentPrivateKey, signJsonDetached, type AnyKey } from '../../shared/src/jobs/crypto';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';
import { ResultsGather, resultsIn } from '../../controller/src/jobs/results-gather';
import { resultsToken } from './helpers';

const agentId = randomUUID();
let sign: AnyKey;
const bytes = (token: string) => new TextEncoder().encode(token);
const resultsEvent = async (n: number, extra: Record<string, unknown> = {}) =>
  bytes(
    await resultsToken(
      sign,
      agentId,
      Array.from({ length: n }, () => ({ job_id: randomUUID(), ...extra })),
    ),
  );

beforeAll(async () => {
  sign = (await importAgentPrivateKey((await generateAgentKeys()).privateJwk)).sign;
});

it('counts the results a signed event carries without parsing it, and a progress event as one', async () => {
  expect(resultsIn(await resultsEvent(1))).toBe(1);
  expect(resultsIn(await resultsEvent(100))).toBe(100);
  const progress = {
    v: PROTOCOL_VERSION,
    type: 'progress',
    agent_id: agentId,
    started: [{ job_id: randomUUID(), attempt: 1, at: new Date().toISOString() }],
    logs: [],
  };
  expect(resultsIn(bytes(await signJsonDetached(progress, sign, AGENT_SIGN_ALG, agentId)))).toBe(1);
  expect(resultsIn(bytes('not a token at all'))).toBe(1);
});

it('waits for more while few results are in, then takes batches of at most maxResults, oldest first', async () => {
  const gather = new ResultsGather<string>({ minResults: 64, maxResults: 256, maxBytes: 1 << 30 });
  // Many events of few results each: the old count of 32 events would have recorded 32 results a batch.
  for (let i = 0; i < 40; i++) {
    gather.add(`small${i}`, await resultsEvent(1));
    expect(gather.full).toBe(false);
  }
  gather.add('big1', await resultsEvent(100));
  expect(gather.full).toBe(true);
  gather.add('big2', await resultsEvent(100));
  gather.add('big3', await resultsEvent(100));
  const first = gather.take();
  expect(first).toEqual([...Array.from({ length: 40 }, (_, i) => `small${i}`), 'big1', 'big2']); // 240 results; big3 would pass 256
  expect(gather.full).toBe(true); // 100 left
  expect(gather.take()).toEqual(['big3']);
  expect(gather.size).toBe(0);
  expect(gather.full).toBe(false);
});

it('caps a batch by bytes, and never takes less than one event however big', async () => {
  const log = 'x'.repeat(20_000);
  const big = await resultsEvent(10, { logs: [{ at: new Date().toISOString(), level: 'info', text: log }] });
  const gather = new ResultsGather<string>({ minResults: 1, maxResults: 1000, maxBytes: big.byteLength * 2 + 10 });
  for (const name of ['a', 'b', 'c']) gather.add(name, big);
  expect(gather.take()).toEqual(['a', 'b']);
  const tiny = new ResultsGather<string>({ minResults: 1, maxResults: 1, maxBytes: 1 });
  tiny.add('only', big);
  tiny.add('next', big);
  expect(tiny.take()).toEqual(['only']);
  expect(tiny.take()).toEqual(['next']);
});
