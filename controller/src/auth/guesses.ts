/**
 * Password guesses one at a time per address and per username (in this process). The lockout
 * is checked before a password and a failure recorded after it; run side by side, a burst of
 * guesses would all pass the check while the first were still being hashed (an audit got 15 of
 * 90 through a limit of 5). In turn, each guess sees the failures of those before it. Replicas
 * each take one guess per key at a time, so a burst spread over them gets at most one more per replica.
 */
export class GuessQueue {
  /** Per key, what the last guess queued on it resolves once done. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Per key, the guesses queued or running on it. */
  private readonly queued = new Map<string, number>();

  /** `maxQueued`: guesses one key may hold at once; more are refused rather than left to pile up (a flood, a slow LDAP server). */
  constructor(private readonly maxQueued = 16) {}

  /** Runs `guess` once every earlier guess on any of `keys` is done; throws GuessQueueFull when one of them holds maxQueued already. */
  async run<T>(keys: string[], guess: () => Promise<T>): Promise<T> {
    const mine = [...new Set(keys)];
    if (mine.some((key) => (this.queued.get(key) ?? 0) >= this.maxQueued)) throw new GuessQueueFull();
    for (const key of mine) this.queued.set(key, (this.queued.get(key) ?? 0) + 1);
    const before = mine.map((key) => this.tails.get(key) ?? Promise.resolve());
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    // Taken before any await, so the order of the calls is the order of the guesses.
    for (const key of mine) this.tails.set(key, finished);
    try {
      await Promise.all(before);
      return await guess();
    } finally {
      done();
      for (const key of mine) {
        if (this.tails.get(key) === finished) this.tails.delete(key);
        const left = this.queued.get(key)! - 1;
        if (left === 0) this.queued.delete(key);
        else this.queued.set(key, left);
      }
    }
  }
}

/** Too many guesses wait on an address or username already. */
export class GuessQueueFull extends Error {
  constructor() {
    super('too many sign-in attempts are waiting for this address or username');
  }
}

/** The keys a guess is queued on: the client's address and the username it is about. */
export const guessKeys = (ip: string, username: string) => [`ip ${ip}`, `user ${username.toLowerCase()}`];
