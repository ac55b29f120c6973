/**
 * The worker-thread pool under the template renderer and the config masks
 * (controller/src/platform/worker-pool.ts), with real worker threads running
 * fixtures/pool-worker.ts: queueing, each way a task can end, and a worker replaced after each
 * way one can be lost.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { workerEntry } from '../../controller/src/platform/worker-entry';
import { WorkerPool, type TaskFailure, type WorkerPoolOptions } from '../../controller/src/platform/worker-pool';
import type { PoolAnswer, PoolTask } from './fixtures/pool-worker';

/** The pool's error for a task, carrying what the pool said of it. */
class Failed extends Error {
  constructor(
    readonly failure: TaskFailure,
    readonly progress?: number,
  ) {
    super(failure.kind);
  }
}

const pools: WorkerPool<PoolTask, PoolAnswer>[] = [];
afterAll(() => Promise.all(pools.map((pool) => pool.close())));

function pool(options: Partial<WorkerPoolOptions<PoolTask>> = {}): WorkerPool<PoolTask, PoolAnswer> {
  const made = new WorkerPool<PoolTask, PoolAnswer>({
    worker: workerEntry(import.meta.url, 'fixtures/pool-worker'),
    size: 1,
    timeoutMs: 20_000,
    memoryMb: 64,
    closedMessage: 'the test pool is closed',
    failed: (_task, failure, progress) => new Failed(failure, progress),
    notStarted: (failure) => new Failed(failure),
    ...options,
  });
  pools.push(made);
  return made;
}

const failureOf = async (answer: Promise<unknown>) => {
  const error = await answer.then(
    () => expect.unreachable('the task was answered'),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(Failed);
  return error as Failed;
};

describe('a worker pool', () => {
  it('queues the tasks beyond its workers and answers each, on no more workers than its size', async () => {
    const workers = pool({ size: 2 });
    const asked = Array.from({ length: 6 }, (_, i) => workers.run({ echo: `task ${i}`, ms: 50 }));
    expect(workers.busy).toBe(6);
    const answers = await Promise.all(asked);
    expect(answers.map((a) => a.value)).toEqual(['task 0', 'task 1', 'task 2', 'task 3', 'task 4', 'task 5']);
    expect(new Set(answers.map((a) => a.thread)).size).toBeLessThanOrEqual(2);
    expect(workers.busy).toBe(0);
  });

  it('stops a task at its time limit, saying where it was, and answers the next task on a new worker', async () => {
    const workers = pool({ timeoutMs: 500 });
    const { thread } = await workers.run({ echo: 'warm' });
    const [spun, next] = [workers.run({ spin: 7 }), workers.run({ echo: 'next' })];
    expect(await failureOf(spun)).toMatchObject({ failure: { kind: 'timeout', ms: 500 }, progress: 7 });
    const answer = await next;
    expect(answer.value).toBe('next');
    expect(answer.thread, 'the stopped worker was replaced').not.toBe(thread);
    // A task's own time limit, as the render pool gives each batch.
    expect(await failureOf(workers.run({ spin: 1 }, 200))).toMatchObject({ failure: { kind: 'timeout', ms: 200 }, progress: 1 });
    expect((await workers.run({ echo: 'again' })).value).toBe('again');
  });

  it('stops a task that exhausts its heap, naming the limit, and goes on with the next', async () => {
    const workers = pool({ memoryMb: 64 });
    const [hoarded, next] = [workers.run({ hoard: true }), workers.run({ echo: 'next' })];
    const { failure } = await failureOf(hoarded);
    expect(failure.kind).toBe('memory');
    // The limit as the worker reports it: the old generation's 64 MB and the young generation's share.
    expect(failure.kind === 'memory' && failure.heapMb).toBeGreaterThanOrEqual(64);
    expect((await next).value).toBe('next');
  });

  it('fails a task that throws alone: its worker goes on', async () => {
    const workers = pool();
    const { thread } = await workers.run({ echo: 'warm' });
    expect(await failureOf(workers.run({ throws: 'no such thing' }))).toMatchObject({ failure: { kind: 'error', message: 'no such thing' } });
    expect(await workers.run({ echo: 'next' })).toEqual({ value: 'next', thread });
  });

  it('fails the task of a worker that exits, and starts another', async () => {
    const workers = pool();
    const { thread } = await workers.run({ echo: 'warm' });
    const [exited, next] = [workers.run({ exit: 3 }), workers.run({ echo: 'next' })];
    expect(await failureOf(exited)).toMatchObject({ failure: { kind: 'exited' } });
    expect((await next).thread).not.toBe(thread);
  });

  it.each([false, true])('fails the waiting tasks when no worker can start (startAll %s), and tries again on the next task', async (startAll) => {
    const workers = pool({ worker: workerEntry(import.meta.url, 'fixtures/no-such-worker'), size: 2, startAll });
    const failures = await Promise.all([failureOf(workers.run({ echo: 'a' })), failureOf(workers.run({ echo: 'b' }))]);
    for (const { failure } of failures) expect(failure).toMatchObject({ kind: 'error', message: expect.stringContaining('no-such-worker') });
    expect(await failureOf(workers.run({ echo: 'c' }))).toMatchObject({ failure: { kind: 'error' } });
    expect(workers.busy).toBe(0);
  });

  it('on close, fails the running and the waiting tasks, and every task after', async () => {
    const workers = pool();
    await workers.run({ echo: 'warm' });
    const ended = Promise.allSettled([workers.run({ spin: 0 }), workers.run({ echo: 'waiting' })]);
    expect(workers.busy, 'one running, one waiting').toBe(2);
    await workers.close();
    const reasons = (await ended).map((r) => r.status === 'rejected' && (r.reason as Error).message);
    expect(reasons).toEqual(['the test pool is closed', 'the test pool is closed']);
    await expect(workers.run({ echo: 'late' })).rejects.toThrow('the test pool is closed');
    expect(workers.busy).toBe(0);
  });
});
