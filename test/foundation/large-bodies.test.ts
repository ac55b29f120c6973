import { describe, expect, it } from 'vitest';
import { csvShape } from '../../controller/src/devices/import';
import { countJsonValues, HeapBudget } from '../../controller/src/http/large-bodies';

/** The counts and the heap budget behind the body limits (http/large-bodies.ts); the HTTP side is test/ops/large-bodies.test.ts. */
const json = (text: string, stopAbove?: number) => countJsonValues(Buffer.from(text), stopAbove);
const csv = (text: string) => csvShape(Buffer.from(text));

describe('countJsonValues', () => {
  it('counts one per item of a non-empty array or object, and one per empty one', () => {
    expect(json('1')).toBe(0);
    expect(json('[]')).toBe(1);
    expect(json('[1,2,3]')).toBe(3);
    expect(json('{"a":1,"b":[1,2],"c":{}}')).toBe(6);
    expect(json('[{},{},{}]')).toBe(6);
  });

  it('skips strings, escaped quotes and backslashes included, whatever their characters', () => {
    expect(json('["a,b{c[d", "\\",[{", "\\\\", "€,é"]')).toBe(4);
    expect(json(JSON.stringify({ 'k,[{': 'v\\",{[', n: [1, '"', 2] }))).toBe(5);
    // An unclosed string runs to the end: malformed JSON is refused by the parser afterwards.
    expect(json('[1,"2,3,4')).toBe(2);
  });

  it('stops once the count passes stopAbove', () => {
    expect(json(`[${'0,'.repeat(99)}0]`, 10)).toBe(11);
  });
});

describe('csvShape', () => {
  it('counts records and fields at line breaks and commas outside quotes', () => {
    expect(csv('')).toEqual({ records: 0, fields: 0 });
    expect(csv('a,b,c')).toEqual({ records: 1, fields: 3 });
    expect(csv('a,b\n1,2\n')).toEqual({ records: 2, fields: 4 });
    expect(csv('a,b\r\n1,2\r\n\r\n')).toEqual({ records: 3, fields: 5 });
    expect(csv('a\r1\r2')).toEqual({ records: 3, fields: 3 });
    expect(csv('a,b\n"1,\n""x"""\n,2')).toEqual({ records: 3, fields: 5 });
  });
});

describe('HeapBudget', () => {
  it('grants shares that fit at once and the others first come first served as shares come back', async () => {
    const budget = new HeapBudget(100);
    const order: string[] = [];
    const a = await budget.reserve(60);
    const b = budget.reserve(50).then((release) => (order.push('b'), release));
    const c = budget.reserve(10).then((release) => (order.push('c'), release));
    await Promise.resolve();
    // c would fit beside a, but waits behind b so that b is not starved by smaller shares.
    expect({ reserved: budget.reserved, waiting: budget.waiting, order }).toEqual({ reserved: 60, waiting: 2, order: [] });
    a();
    const [releaseB, releaseC] = await Promise.all([b, c]);
    expect({ reserved: budget.reserved, waiting: budget.waiting, order }).toEqual({ reserved: 60, waiting: 0, order: ['b', 'c'] });
    releaseB();
    releaseB(); // a second call gives nothing back twice
    releaseC();
    expect(budget.reserved).toBe(0);
  });

  it('runs a share larger than the whole budget alone', async () => {
    const budget = new HeapBudget(100);
    const small = await budget.reserve(1);
    let granted = false;
    const big = budget.reserve(1_000).then((release) => ((granted = true), release));
    await Promise.resolve();
    expect(granted).toBe(false);
    small();
    const release = await big;
    expect(budget.reserved).toBe(100);
    const next = budget.reserve(1);
    expect(budget.waiting).toBe(1);
    release();
    (await next)();
    expect(budget.reserved).toBe(0);
  });
});
