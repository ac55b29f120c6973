import type { Logger } from 'pino';
import type { AgentDirectory } from './ports';

/** How long counts gather before they are written: a burst of outcomes costs one update per agent. */
const FLUSH_AFTER_MS = 100;

/**
 * Per-agent job counts (GET /api/agents), added up and written after the outcomes commit: a
 * counter updated inside each outcome's transaction would make every outcome of one agent wait
 * for the last. Informational: a crash may lose the last few increments, never an outcome.
 */
export class AgentJobCounts {
  private readonly counts = new Map<string, { completed: number; failed: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly agents: AgentDirectory,
    private readonly log: Logger,
  ) {}

  add(agentId: string, succeeded: boolean): void {
    const c = this.counts.get(agentId) ?? { completed: 0, failed: 0 };
    if (succeeded) c.completed += 1;
    else c.failed += 1;
    this.counts.set(agentId, c);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** Writes what has gathered now (and on shutdown, so that the last outcomes count too). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const counts = [...this.counts];
    this.counts.clear();
    for (const [agentId, c] of counts) {
      await this.agents
        .addJobCounts(agentId, c.completed, c.failed)
        .catch((err) => this.log.warn({ err: (err as Error).message }, 'agent job counts not updated'));
    }
  }
}
