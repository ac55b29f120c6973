import type { Logger } from 'pino';

/** One background part of the controller: a loop, a listener, a pool. */
export interface LifecyclePart {
  name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

/**
 * The controller's background parts, started in the order they were added (dependencies first)
 * and stopped in reverse, each named in the logs. Built by the composition root.
 */
export class Lifecycle {
  private readonly parts: LifecyclePart[] = [];
  private started: LifecyclePart[] = [];

  constructor(private readonly log: Logger) {}

  add(part: LifecyclePart): void {
    this.parts.push(part);
  }

  names(): string[] {
    return this.parts.map((p) => p.name);
  }

  async start(): Promise<void> {
    for (const part of this.parts) {
      await part.start?.();
      this.started.push(part);
      this.log.debug({ part: part.name }, 'started');
    }
  }

  /** Stops what started, last first; a part that fails to stop is logged and the rest still stop. */
  async stop(): Promise<void> {
    const started = this.started.reverse();
    this.started = [];
    for (const part of started) {
      try {
        await part.stop?.();
        this.log.debug({ part: part.name }, 'stopped');
      } catch (err) {
        this.log.error({ err, part: part.name }, 'stopping failed');
      }
    }
  }
}
