import { describe, expect, it } from 'vitest';
import { Batcher, Gatherer, mapLimit, Semaphore } from '../../shared/src/jobs/limit';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Batcher', () => {
  it('gathers the calls of one turn into one batch and answers each with its own result', async () => {
    const batches: number[][] = [];
    const doubler = new Batcher<number, number>(async (items) => {
      batches.push(items);
      return items.map((i) => i * 2);
    });
    expect(await Promise.all([1, 2, 3].map((i) => doubler.add(i)))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('gathers calls that arrive while a batch is in flight into the next one, up to max', async () => {
    const batches: number[][] = [];
    const slow = new Batcher<number, number>(async (items) => {
      batches.push(items);
      await sleep(30);
      return items;
    }, 2);
    const first = slow.add(1);
    await sleep(5); // the first batch is in flight now
    const later = [2, 3, 4].map((i) => slow.add(i));
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it('with a gather window, calls spread over it share the batch', async () => {
    const batches: number[][] = [];
    const gathering = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        return items;
      },
      100,
      300,
    );
    const first = gathering.add(1);
    await sleep(10); // well inside the 300 ms window
    const second = gathering.add(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('rejects every call of a batch whose run throws, and keeps serving later batches', async () => {
    let fail = true;
    const flaky = new Batcher<number, number>(async (items) => {
      if (fail) throw new Error('database unavailable');
      return items;
    });
    const failed = await Promise.allSettled([flaky.add(1), flaky.add(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason.message).toBe('database unavailable');
    fail = false;
    expect(await flaky.add(3)).toBe(3);
  });
});

describe('Semaphore and mapLimit', () => {
  it('never runs more than the limit at once and answers in input order', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapLimit([5, 1, 4, 2, 3], 2, async (ms, i) => {
      running += 1;
      peak = Math.max(peak, running);
      await sleep(ms);
      running -= 1;
      return i;
    });
    expect(results).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
  });

  it('hands a released slot to the longest waiter', async () => {
    const slots = new Semaphore(1);
    const order: string[] = [];
    await slots.acquire();
    const a = slots.use(async () => void order.push('a'));
    const b = slots.use(async () => void order.push('b'));
    expect(slots.free).toBe(0);
    slots.release();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
    expect(slots.free).toBe(1);
  });
  it('gives up waiting for a slot when told to, holding none, and the slot goes to the next waiter', async () => {
    const slots = new Semaphore(1);
    expect(await slots.acquire()).toBe(true);
    const stop = new AbortController();
    const gaveUp = slots.acquire(stop.signal);
    const next = slots.acquire();
    stop.abort();
    expect(await gaveUp).toBe(false);
    slots.release();
    expect(await next).toBe(true); // the released slot went past the waiter that gave up
    expect(slots.free).toBe(0);
    slots.release();
    expect(slots.free).toBe(1);
    expect(await slots.acquire(stop.signal)).toBe(false); // already told: takes nothing even when free
    expect(slots.free).toBe(1);
  });
});

describe('Gatherer', () => {
  /** A gatherer of strings (size: their length) whose batches are recorded and answered with their lengths after `ms`. */
  const lengths = (limits: { max: number; maxBytes: number; flushMs: number; eager?: boolean }, ms = 0) => {
    const batches: string[][] = [];
    const gather = new Gatherer<string, number>(
      async (items) => {
        batches.push(items);
        await sleep(ms);
        return items.map((i) => i.length);
      },
      limits,
      (item) => item.length,
    );
    return { batches, gather };
  };

  it('sends once max items wait, or flushMs after the first; each item answered with its own result', async () => {
    const { batches, gather } = lengths({ max: 3, maxBytes: 1_000, flushMs: 20 });
    const started = Date.now();
    const answers = ['a', 'bb', 'ccc', 'dddd'].map((s) => gather.add(s));
    expect(batches).toEqual([['a', 'bb', 'ccc']]); // at once: max reached
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([['a', 'bb', 'ccc'], ['dddd']]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('sends before an item would pass maxBytes, and an item of maxBytes alone', async () => {
    const { batches, gather } = lengths({ max: 100, maxBytes: 10, flushMs: 5 });
    await Promise.all(['aaaa', 'bbbb', 'cccc', 'x'.repeat(12), 'd'].map((s) => gather.add(s)));
    expect(batches).toEqual([['aaaa', 'bbbb'], ['cccc'], ['x'.repeat(12)], ['d']]);
  });

  it('does not hold a batch back while another is in flight, and rejects every item of a batch that fails', async () => {
    const { batches, gather } = lengths({ max: 2, maxBytes: 1_000, flushMs: 5 }, 200);
    const slow = gather.add('slow');
    await sleep(20); // its batch is in flight
    const started = Date.now();
    const next = await Promise.all([gather.add('n1'), gather.add('n2')]);
    expect(next).toEqual([2, 2]);
    expect(batches).toEqual([['slow'], ['n1', 'n2']]);
    expect(Date.now() - started).toBeLessThan(400);
    await slow;
    const failing = new Gatherer<number, number>(
      async () => {
        throw new Error('no answer');
      },
      { max: 10, maxBytes: 10, flushMs: 1 },
      () => 1,
    );
    await expect(Promise.all([failing.add(1), failing.add(2)])).rejects.toThrow('no answer');
  });

  it('eager: sends on the next turn while nothing is in flight; gathers while a batch is out, until it is answered or flushMs', async () => {
    const { batches, gather } = lengths({ max: 100, maxBytes: 1_000, flushMs: 150, eager: true }, 50);
    const started = Date.now();
    const first = [gather.add('a'), gather.add('b')];
    await sleep(10); // [a, b] went at once and is in flight for 50 ms
    expect(batches).toEqual([['a', 'b']]);
    const next = [gather.add('c'), gather.add('d')];
    await sleep(10);
    expect(batches).toHaveLength(1); // c and d wait for it
    await Promise.all(first);
    await sleep(5);
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]); // sent as soon as [a, b] was answered, not after 150 ms
    await Promise.all(next);
    expect(Date.now() - started).toBeLessThan(140);
    // A batch that is not answered holds the next for flushMs at the most.
    const { batches: held, gather: slow } = lengths({ max: 100, maxBytes: 1_000, flushMs: 30, eager: true }, 1_000);
    void slow.add('slow');
    await sleep(5);
    void slow.add('next');
    await sleep(60);
    expect(held).toEqual([['slow'], ['next']]);
  });
});
