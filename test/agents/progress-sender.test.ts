/**
 * The agent's progress sender (agent/src/progress.ts): long jobs' start notices and log lines go
 * many jobs to an event, on a timer or sooner when many lines wait, and a job that ends takes back
 * what was not sent (its result carries it).
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { ProgressSender } from '../../agent/src/progress';
import { AgentEvent, PROTOCOL_VERSION, checkMessage, type LogLine, type ProgressEvent } from '../../shared/src/jobs/messages';

const line = (text: string): LogLine => ({ at: new Date().toISOString(), level: 'info', text });
const job = () => ({ job_id: randomUUID(), attempt: 1 });
type Sent = Pick<ProgressEvent, 'started' | 'logs'>;

function sender(limits = { startedMs: 50, flushMs: 50, maxLines: 50 }) {
  const sent: Sent[] = [];
  return { sent, progress: new ProgressSender((p) => sent.push(p), limits) };
}

it('sends the start and lines of every job noted within the interval as one event that fits the protocol', async () => {
  const { sent, progress } = sender();
  const [a, b, c] = [job(), job(), job()];
  const at = new Date().toISOString();
  progress.started(a, at, [line('connecting to a')]);
  progress.started(b, at, []);
  progress.started(c, at, [line('connecting to c')]);
  progress.logs(a, [line('connected over ssh')]);
  expect(sent).toHaveLength(0);
  await new Promise((r) => setTimeout(r, 120));
  expect(sent).toHaveLength(1);
  expect(sent[0].started.map((s) => s.job_id)).toEqual([a.job_id, b.job_id, c.job_id]);
  expect(sent[0].logs).toEqual([
    { ...a, lines: [expect.objectContaining({ text: 'connecting to a' }), expect.objectContaining({ text: 'connected over ssh' })] },
    { ...c, lines: [expect.objectContaining({ text: 'connecting to c' })] },
  ]);
  const event = checkMessage(AgentEvent, { v: PROTOCOL_VERSION, type: 'progress', agent_id: randomUUID(), ...sent[0] }, 'agent event');
  expect(event.type).toBe('progress');
  // Later lines go in a later event, without the start again.
  progress.logs(b, [line('still going')]);
  progress.flush();
  expect(sent[1]).toEqual({ started: [], logs: [{ ...b, lines: [expect.objectContaining({ text: 'still going' })] }] });
});

it('flushes early once many lines wait', () => {
  const { sent, progress } = sender({ startedMs: 60_000, flushMs: 60_000, maxLines: 3 });
  const a = job();
  progress.started(a, new Date().toISOString(), [line('1'), line('2')]);
  expect(sent).toHaveLength(0);
  progress.logs(a, [line('3')]);
  expect(sent).toHaveLength(1);
  expect(sent[0].logs[0].lines.map((l) => l.text)).toEqual(['1', '2', '3']);
  progress.flush();
  expect(sent).toHaveLength(1); // nothing noted: nothing sent
});

it('gives a job that ends what was not sent yet, and leaves it out of the next event', () => {
  const { sent, progress } = sender({ startedMs: 60_000, flushMs: 60_000, maxLines: 50 });
  const [a, b] = [job(), job()];
  progress.started(a, new Date().toISOString(), [line('a1')]);
  progress.started(b, new Date().toISOString(), [line('b1')]);
  expect(progress.take(a).map((l) => l.text)).toEqual(['a1']);
  expect(progress.take(a)).toEqual([]);
  progress.flush();
  expect(sent).toEqual([{ started: [expect.objectContaining(b)], logs: [{ ...b, lines: [expect.objectContaining({ text: 'b1' })] }] }]);
});

it('sends a start notice soon, and brings lines already waiting along', async () => {
  const { sent, progress } = sender({ startedMs: 20, flushMs: 60_000, maxLines: 50 });
  const [a, b] = [job(), job()];
  progress.started(a, new Date().toISOString(), []);
  await new Promise((r) => setTimeout(r, 80));
  progress.logs(a, [line('later line')]); // lines alone wait for the long interval
  await new Promise((r) => setTimeout(r, 80));
  expect(sent).toHaveLength(1);
  progress.started(b, new Date().toISOString(), []);
  await new Promise((r) => setTimeout(r, 80));
  expect(sent).toHaveLength(2);
  expect(sent[1]).toEqual({ started: [expect.objectContaining(b)], logs: [{ ...a, lines: [expect.objectContaining({ text: 'later line' })] }] });
});
