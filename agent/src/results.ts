/**
 * Results go back to the controller many to a message: each finished job's result waits here until
 * RESULTS_MAX of them are waiting, or RESULTS_MAX_BYTES, or RESULTS_FLUSH_MS after the first of
 * them, whichever comes first; then they go as one `results` event, signed once. So a burst of
 * quick jobs costs a few signatures and messages, and one slow job never holds the others' results
 * back for longer than the flush interval.
 */
import { Gatherer } from '../../shared/src/jobs/limit';
import { PROTOCOL_VERSION, type JobResult } from '../../shared/src/jobs/messages';

export const RESULTS_MAX = 100;
/** Bytes of results JSON to an event: well under NATS max_payload (1 MB by default). */
export const RESULTS_MAX_BYTES = 256 * 1024;
export const RESULTS_FLUSH_MS = 150;

/** The JSON of one `results` event of results already serialized (each JSON text stringified once). */
export function resultsEventJson(agentId: string, results: string[]): string {
  return `{"v":${PROTOCOL_VERSION},"type":"results","agent_id":${JSON.stringify(agentId)},"results":[${results.join(',')}]}`;
}

export class ResultsSender {
  private readonly gather: Gatherer<string, void>;

  /** `send` publishes the results (each the JSON of a JobResult) as one event and resolves once it is stored. */
  constructor(send: (results: string[]) => Promise<void>, limits = { max: RESULTS_MAX, maxBytes: RESULTS_MAX_BYTES, flushMs: RESULTS_FLUSH_MS }) {
    this.gather = new Gatherer<string, void>(
      async (results) => {
        await send(results);
        return results.map(() => undefined);
      },
      limits,
      (json) => json.length,
    );
  }

  /** Resolves once the result is stored (in an event with others); rejects when it could not be. */
  add(result: JobResult): Promise<void> {
    return this.gather.add(JSON.stringify(result));
  }

  /** Sends what waits now. */
  flush(): void {
    this.gather.flush();
  }
}
