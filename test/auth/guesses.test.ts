import { describe, expect, it } from 'vitest';
import { GuessQueue, GuessQueueFull, guessKeys } from '../../controller/src/auth/guesses';

/** A guess that runs until `release` is called, recording when it started. */
function held(started: string[], name: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { release, guess: async () => (started.push(name), await gate, name) };
}

describe('password guesses one at a time per address and username', () => {
  it('runs guesses sharing a key in order, one at a time; others at once', async () => {
    const queue = new GuessQueue();
    const started: string[] = [];
    const a = held(started, 'a');
    const b = held(started, 'b');
    const c = held(started, 'c');
    const runs = [
      queue.run(guessKeys('192.0.2.1', 'alice'), a.guess),
      queue.run(guessKeys('192.0.2.1', 'bob'), b.guess), // same address
      queue.run(guessKeys('192.0.2.9', 'carol'), c.guess), // nothing shared
    ];
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual(['a', 'c']);
    a.release();
    await runs[0];
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual(['a', 'c', 'b']);
    b.release();
    c.release();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a guess when a key already holds the most it may, and takes guesses again once they are done', async () => {
    const queue = new GuessQueue(2);
    const started: string[] = [];
    const first = held(started, '1');
    const second = held(started, '2');
    const runs = [queue.run(guessKeys('192.0.2.1', 'Alice'), first.guess), queue.run(guessKeys('192.0.2.2', 'alice'), second.guess)];
    // The username is matched case-insensitively: both hold 'alice'.
    await expect(queue.run(guessKeys('192.0.2.3', 'ALICE'), async () => 'third')).rejects.toBeInstanceOf(GuessQueueFull);
    first.release();
    second.release();
    await Promise.all(runs);
    expect(await queue.run(guessKeys('192.0.2.3', 'alice'), async () => 'again')).toBe('again');
  });

  it('lets the next guess run when one fails', async () => {
    const queue = new GuessQueue();
    const failing = queue.run(guessKeys('192.0.2.1', 'dave'), async () => {
      throw new Error('wrong password');
    });
    await expect(failing).rejects.toThrow('wrong password');
    expect(await queue.run(guessKeys('192.0.2.1', 'dave'), async () => 'next')).toBe('next');
  });
});
