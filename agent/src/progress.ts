/**
 * Progress of long jobs goes to the controller many jobs to a message. A job still running
 * STARTED_AFTER_MS after it started is noted as started, and its log lines are noted as they come;
 * within STARTED_FLUSH_MS of a start notice, PROGRESS_FLUSH_MS of lines (sooner past PROGRESS_MAX_LINES)
 * whatever is noted goes as one `progress` event, signed once. With hundreds of sessions sharing two cores nearly every job runs that long,
 * and one event per job and kind cost a signature, a verification and a JetStream message each.
 *
 * A job that ends takes back what was not sent yet (take()): its result carries its lines and start
 * time, so they are recorded with its outcome, never after it.
 */
import type { LogLine, ProgressEvent } from '../../shared/src/jobs/messages';

export const STARTED_AFTER_MS = 2_000;
/** A start notice goes soon (the controller shows the job running, a deadline counts it started); lines alone wait longer. */
export const STARTED_FLUSH_MS = 200;
export const PROGRESS_FLUSH_MS = 1_000;
/** Lines waiting before an early flush: an event stays far below NATS max_payload (lines are ≤ 4,000 characters). */
export const PROGRESS_MAX_LINES = 50;

type Noted = { job_id: string; attempt: number; started: string | null; lines: LogLine[] };
type Progress = Pick<ProgressEvent, 'started' | 'logs'>;

export class ProgressSender {
  private readonly noted = new Map<string, Noted>();
  private lines = 0;
  private timer: NodeJS.Timeout | null = null;
  private due = 0;

  /** `send` publishes one progress event (and keeps trying until it is stored). */
  constructor(
    private readonly send: (progress: Progress) => void,
    private readonly limits = { startedMs: STARTED_FLUSH_MS, flushMs: PROGRESS_FLUSH_MS, maxLines: PROGRESS_MAX_LINES },
  ) {}

  /** The job has run a while: it is reported started at `at`, with its lines so far. */
  started(job: { job_id: string; attempt: number }, at: string, lines: LogLine[]): void {
    const n = this.entry(job);
    n.started = at;
    this.add(n, lines, this.limits.startedMs);
  }

  /** More lines of a job already reported started. */
  logs(job: { job_id: string; attempt: number }, lines: LogLine[]): void {
    this.add(this.entry(job), lines, this.limits.flushMs);
  }

  /** What of the job was not sent yet, taken back: it goes with the job's result instead. */
  take(job: { job_id: string; attempt: number }): LogLine[] {
    const key = `${job.job_id}:${job.attempt}`;
    const n = this.noted.get(key);
    if (!n) return [];
    this.noted.delete(key);
    this.lines -= n.lines.length;
    return n.lines;
  }

  /** Sends what is noted now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.noted.size === 0) return;
    const entries = [...this.noted.values()];
    this.noted.clear();
    this.lines = 0;
    this.send({
      started: entries.flatMap((n) => (n.started ? [{ job_id: n.job_id, attempt: n.attempt, at: n.started }] : [])),
      logs: entries.flatMap((n) => (n.lines.length > 0 ? [{ job_id: n.job_id, attempt: n.attempt, lines: n.lines }] : [])),
    });
  }

  private entry(job: { job_id: string; attempt: number }): Noted {
    const key = `${job.job_id}:${job.attempt}`;
    let n = this.noted.get(key);
    if (!n) {
      n = { job_id: job.job_id, attempt: job.attempt, started: null, lines: [] };
      this.noted.set(key, n);
    }
    return n;
  }

  /** Notes lines; sends within `withinMs` (sooner than a flush already due stays as it is, a later one is brought forward). */
  private add(n: Noted, lines: LogLine[], withinMs: number): void {
    n.lines.push(...lines);
    this.lines += lines.length;
    if (this.lines >= this.limits.maxLines) {
      this.flush();
      return;
    }
    const due = Date.now() + withinMs;
    if (this.timer && this.due <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => this.flush(), withinMs);
  }
}
