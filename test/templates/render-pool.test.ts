import { afterAll, describe, expect, it } from 'vitest';
import { RenderAborted, RenderPool, type RenderRequest } from '../../controller/src/templates/render-pool';

const pool = new RenderPool({ size: 2, timeoutMs: 1_500 });
afterAll(() => pool.close());

const requests = (n: number): RenderRequest[] =>
  Array.from({ length: n }, (_, i) => ({ source: `line {{ n }}{% if n % 2 %} odd{% endif %}`, variables: { n: i } }));

describe('render pool', () => {
  it('answers a large call split across its workers in the order asked, each error at its own request', async () => {
    const asked = requests(301);
    asked[250] = { source: '{{ missing.field }}', variables: { n: 250 } };
    const results = await pool.renderMany(asked);
    expect(results).toHaveLength(301);
    expect(results[0]).toEqual({ ok: true, output: 'line 0' });
    expect(results[151]).toEqual({ ok: true, output: 'line 151 odd' });
    expect(results[300]).toEqual({ ok: true, output: 'line 300' });
    expect(results[250].ok).toBe(false);
    expect(results.filter((r) => !r.ok)).toHaveLength(1);
  });

  it('names the request of the call that a limit stopped, in whichever part of the call it was', async () => {
    const asked = requests(120);
    asked[97] = { source: '{{ "a" | center(2000000000) }}', variables: {} };
    const stopped = await pool.renderMany(asked).catch((err: unknown) => err);
    expect(stopped).toBeInstanceOf(RenderAborted);
    expect((stopped as RenderAborted).index).toBe(97);
    expect((stopped as RenderAborted).message).toMatch(/^rendering (took longer than|used more than)/);
    // The stopped worker is replaced; the pool keeps serving.
    expect(await pool.renderMany(requests(70))).toHaveLength(70);
  });

  it("fails the renders past a call's output allowance, shared by the call's parts, with a message saying what to do", async () => {
    const small = new RenderPool({ size: 2, callOutputChars: 10_000 });
    try {
      // 100 renders of 200 characters, split in two parts of 50 with 5,000 characters each.
      const results = await small.renderMany(Array.from({ length: 100 }, () => ({ source: 'x'.repeat(200), variables: {} })));
      const failed = results.flatMap((r, i) => (r.ok ? [] : [i]));
      expect(results.filter((r) => r.ok)).toHaveLength(50);
      expect(failed).toEqual([...range(25, 50), ...range(75, 100)]);
      const first = results[25];
      expect(!first.ok && first.error.detail).toBe(
        'the renders of this call add up to more than 5000 characters of output; render fewer devices at once',
      );
      // Calls below the allowance are untouched.
      expect((await small.renderMany(requests(40))).every((r) => r.ok)).toBe(true);
    } finally {
      await small.close();
    }
  });
});

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
