/**
 * The jobs an agent has taken, each at the latest attempt it took, until that job's deadline. On
 * a NATS without per-agent accounts anybody may publish on a pool's jobs subject, and a batch the
 * controller signed stays genuine until its jobs' deadlines: sent again, it ran its devices again.
 * The controller sends a job again only at a new attempt, so an attempt not later than one taken
 * is a copy. Past its deadline a job is not run anyway, so it is forgotten then.
 *
 * With a file (in the agent's state dir) the jobs taken outlive the process: each batch's jobs are
 * appended as they are taken, one line each, before any of them runs, and read back at the next
 * start, so a batch sent again after a restart does not run its devices again either.
 */
import { appendFileSync, readFileSync, renameSync } from 'node:fs';
import type { BatchJob } from '../../shared/src/jobs/messages';
import { writeSecret } from './state-dir';

/**
 * Jobs remembered at the most: many more than an agent takes within the longest deadline (24 h)
 * at its usual pace, about 15 MB. Beyond it the job taken first is forgotten first.
 */
export const TAKEN_JOBS_MAX = 100_000;
/** Forgotten jobs (deadline passed) are dropped every this many jobs taken. */
const PRUNE_EVERY = 1_000;

type Taken = Pick<BatchJob, 'job_id' | 'attempt' | 'deadline_at'>;
/** A job's line in the file: id, attempt, deadline (epoch ms). */
const lineOf = (jobId: string, attempt: number, deadline: number) => `${jobId} ${attempt} ${deadline}\n`;

export class TakenJobs {
  private readonly taken = new Map<string, { attempt: number; deadline: number }>();
  private sincePrune = 0;
  /** Lines in the file: rewritten with the jobs still remembered once most of them are forgotten ones. */
  private lines = 0;

  constructor(private readonly o: { max?: number; file?: string } = {}) {
    if (o.file) this.load(o.file);
  }

  /**
   * Notes the jobs as taken at their attempts (and in the file, when there is one, before any of
   * them runs); answers the copies: the jobs whose attempt, or a later one, was taken before.
   */
  takeAll<T extends Taken>(jobs: T[], now = Date.now()): T[] {
    const fresh = new Set<T>();
    const lines: string[] = [];
    for (const job of jobs) {
      if (!this.isNew(job.job_id, job.attempt, now)) continue;
      const deadline = Date.parse(job.deadline_at);
      this.note(job.job_id, job.attempt, deadline, now);
      fresh.add(job);
      lines.push(lineOf(job.job_id, job.attempt, deadline));
    }
    // After noting them: a prune while noting rewrites the file from memory, before these lines.
    if (this.o.file && lines.length > 0) {
      appendFileSync(this.o.file, lines.join(''), { mode: 0o600 });
      this.lines += lines.length;
    }
    return jobs.filter((job) => !fresh.has(job));
  }

  /** takeAll for one job: true when taken now, false for a copy. */
  take(job: Taken, now = Date.now()): boolean {
    return this.takeAll([job], now).length === 0;
  }

  private isNew(jobId: string, attempt: number, now: number): boolean {
    const before = this.taken.get(jobId);
    return !(before && before.deadline > now && attempt <= before.attempt);
  }

  private note(jobId: string, attempt: number, deadline: number, now: number): void {
    // Taken again last: the map stays in the order jobs were taken.
    this.taken.delete(jobId);
    this.taken.set(jobId, { attempt, deadline });
    if (++this.sincePrune >= PRUNE_EVERY) this.prune(now);
    if (this.taken.size > (this.o.max ?? TAKEN_JOBS_MAX)) this.taken.delete(this.taken.keys().next().value!);
  }

  private prune(now: number): void {
    this.sincePrune = 0;
    for (const [id, t] of this.taken) if (!(t.deadline > now)) this.taken.delete(id);
    if (this.o.file && this.lines > 2 * this.taken.size + PRUNE_EVERY) this.rewrite(this.o.file);
  }

  /** The jobs of the file still before their deadlines; the file rewritten with only those. */
  private load(file: string): void {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      /* none yet */
    }
    const now = Date.now();
    for (const line of text.split('\n')) {
      const [jobId, attemptText, deadlineText] = line.split(' ');
      const attempt = Number(attemptText);
      const deadline = Number(deadlineText);
      // A line a crash cut short is skipped: none of its batch had run yet.
      if (!jobId || !Number.isInteger(attempt) || !(deadline > now)) continue;
      if (this.isNew(jobId, attempt, now)) this.note(jobId, attempt, deadline, now);
    }
    this.rewrite(file);
  }

  private rewrite(file: string): void {
    const lines = [...this.taken].map(([id, t]) => lineOf(id, t.attempt, t.deadline));
    writeSecret(`${file}.new`, lines.join(''));
    renameSync(`${file}.new`, file);
    this.lines = lines.length;
  }
}
