/**
 * A device's confirmed commit (Junos and IOS-XR `commit confirmed`), shared by all its shells:
 * the change is committed and a timer started; a later commit confirms it (on Junos in any
 * session; on XR only in the one that armed it: `owner`); when the timer fires first the running
 * config goes back to what it was before the confirmed commit.
 * The timer runs `msPerSecond` for each second the device would wait, so that tests need not wait
 * minutes.
 */
export class ConfirmedCommitTimer {
  private timer?: NodeJS.Timeout;
  private rollback?: () => void;
  /** Confirmed commits taken so far (a fault drops the connection right after one). */
  armed = 0;
  /** Rollbacks the timer made. */
  rolledBack = 0;

  constructor(private readonly msPerSecond: number) {}

  /** The shell whose confirmed commit is pending. */
  owner?: object;

  get pending(): boolean {
    return this.rollback !== undefined;
  }

  /**
   * A confirmed commit is about to change the running config: `rollback` puts back what runs now.
   * Another one while one is pending restarts the timer but keeps the first one's way back: the
   * config to return to is the last one somebody confirmed.
   */
  arm(seconds: number, rollback: () => void, owner?: object): void {
    this.armed++;
    this.owner = owner;
    this.rollback ??= rollback;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fire(), seconds * this.msPerSecond);
    this.timer.unref();
  }

  /** A commit that confirms what is pending (a no-op when nothing is). */
  confirm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.rollback = undefined;
    this.owner = undefined;
  }

  private fire(): void {
    const rollback = this.rollback;
    this.confirm();
    this.rolledBack++;
    rollback?.();
  }
}
