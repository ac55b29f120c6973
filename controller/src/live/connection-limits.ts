/**
 * How many /api/live connections one client may hold. A connection that has not authenticated yet
 * costs the controller a socket and a timer for up to 10 s, and an authenticated one gets every
 * event of its organization: without a bound, one address could hold thousands of the first and
 * one user thousands of the second (each a copy of every event), in a 256 MiB heap.
 */
export const LIVE_LIMITS = {
  /**
   * Connections from one client address still waiting to authenticate (a browser's takes
   * milliseconds). Behind a proxy every client has the proxy's address unless
   * SWITCHBOARD_TRUST_PROXY names it: room for a burst of consoles loading at once.
   */
  waitingPerAddress: 64,
  /** Authenticated streams of one user, on this replica (the console holds one per tab). */
  streamsPerUser: 32,
};

/** WebSocket close code for a connection over one of the limits (4000-4999 are the application's). */
export const TOO_MANY_CODE = 4429;

/** Counts held per key; take() answers a release, or null when the key is at its limit. */
export class HeldCounts {
  private readonly held = new Map<string, number>();

  take(key: string, max: number): (() => void) | null {
    const now = this.held.get(key) ?? 0;
    if (now >= max) return null;
    this.held.set(key, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }
}
