/**
 * Sizes the batches of agent events the controller records at once by the work in them (the
 * results they carry, and their bytes), not by how many events they are: an event carries
 * anything from one progress line to a hundred results, and a batch is recorded with a few
 * statements per OUTCOMES_PER_TRANSACTION results whatever its count of events.
 */
const JOB_ID = Buffer.from('"job_id":');

/**
 * The results an event's payload carries, counted without parsing it (the verifier parses it
 * once, later): its `"job_id":` keys, at least 1. A key inside a result's own data would count
 * too, which only makes the estimate a little high; it sizes batches, nothing else.
 */
export function resultsIn(data: Uint8Array): number {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let n = 0;
  for (let at = bytes.indexOf(JOB_ID); at >= 0; at = bytes.indexOf(JOB_ID, at + JOB_ID.length)) n += 1;
  return Math.max(1, n);
}

export interface GatherLimits {
  /** Fewer results than this wait (up to the gather interval) for more before they are recorded. */
  minResults: number;
  /** A batch holds at most this many results and bytes (and always at least one event). */
  maxResults: number;
  maxBytes: number;
}

interface Gathered<T> {
  item: T;
  results: number;
  bytes: number;
}

/** Events waiting to be recorded, taken in batches of about the same work. */
export class ResultsGather<T> {
  private readonly waiting: Gathered<T>[] = [];
  private results = 0;

  constructor(private readonly limits: GatherLimits) {}

  get size(): number {
    return this.waiting.length;
  }

  /** Whether what waits is worth a batch now (else it waits for more, up to the gather interval). */
  get full(): boolean {
    return this.results >= this.limits.minResults;
  }

  add(item: T, data: Uint8Array): void {
    const results = resultsIn(data);
    this.waiting.push({ item, results, bytes: data.byteLength });
    this.results += results;
  }

  /** The next batch: the oldest events, up to the limits, at least one. */
  take(): T[] {
    let results = 0;
    let bytes = 0;
    let n = 0;
    for (const w of this.waiting) {
      if (n > 0 && (results + w.results > this.limits.maxResults || bytes + w.bytes > this.limits.maxBytes)) break;
      results += w.results;
      bytes += w.bytes;
      n += 1;
    }
    this.results -= results;
    return this.waiting.splice(0, n).map((w) => w.item);
  }
}
