/**
 * Results go back to the controller many to a message: each finished job's result waits here until
 * RESULTS_MAX of them are waiting, or RESULTS_MAX_BYTES, or RESULTS_FLUSH_MS after the first of
 * them, whichever comes first; then they go as one `results` event, signed once. So a burst of
 * quick jobs costs a few signatures and messages, and one slow job never holds the others' results
 * back for longer than the flush interval.
 */
import { PROTOCOL_VERSION, type JobResult } from '../../shared/src/jobs/messages';

export const RESULTS_MAX = 100;
/** Bytes of results JSON to an event: well under NATS max_payload (1 MB by default). */
export const RESULTS_MAX_BYTES = 256 * 1024;
export const RESULTS_FLUSH_MS = 150;

/** The JSON of one `results` event of results already serialized (each JSON text stringified once). */
export function resultsEventJson(agentId: string, results: string[]): string {
  return `{"v":${PROTOCOL_VERSION},"type":"results","agent_id":${JSON.stringify(agentId)},"results":[${results.join(',')}]}`;
}

interface Waiting {
  json: string;
  resolve(): void;
  reject(err: unknown): void;
}

export class ResultsSender {
  private waiting: Waiting[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;

  /** `send` publishes the results (each the JSON of a JobResult) as one event and resolves once it is stored. */
  constructor(
    private readonly send: (results: string[]) => Promise<void>,
    private readonly limits = { max: RESULTS_MAX, maxBytes: RESULTS_MAX_BYTES, flushMs: RESULTS_FLUSH_MS },
  ) {}

  /** Resolves once the result is stored (in an event with others); rejects when it could not be. */
  add(result: JobResult): Promise<void> {
    const json = JSON.stringify(result);
    if (this.waiting.length > 0 && this.bytes + json.length > this.limits.maxBytes) this.flush();
    return new Promise((resolve, reject) => {
      this.waiting.push({ json, resolve, reject });
      this.bytes += json.length;
      if (this.waiting.length >= this.limits.max || this.bytes >= this.limits.maxBytes) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.limits.flushMs);
    });
  }

  /** Sends what waits now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.waiting;
    this.waiting = [];
    this.bytes = 0;
    if (batch.length === 0) return;
    this.send(batch.map((w) => w.json)).then(
      () => batch.forEach((w) => w.resolve()),
      (err: unknown) => batch.forEach((w) => w.reject(err)),
    );
  }
}
