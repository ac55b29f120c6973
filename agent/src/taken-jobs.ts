/**
 * The jobs an agent has taken, each at the latest attempt it took, until that job's deadline. On
 * a NATS without per-agent accounts anybody may publish on a pool's jobs subject, and a batch the
 * controller signed stays genuine until its jobs' deadlines: sent again, it ran its devices again.
 * The controller sends a job again only at a new attempt, so an attempt not later than one taken
 * is a copy. Past its deadline a job is not run anyway, so it is forgotten then.
 */
import type { BatchJob } from '../../shared/src/jobs/messages';

/**
 * Jobs remembered at the most: many more than an agent takes within the longest deadline (24 h)
 * at its usual pace, about 15 MB. Beyond it the job taken first is forgotten first.
 */
export const TAKEN_JOBS_MAX = 100_000;
/** Forgotten jobs (deadline passed) are dropped every this many jobs taken. */
const PRUNE_EVERY = 1_000;

export class TakenJobs {
  private readonly taken = new Map<string, { attempt: number; deadline: number }>();
  private sincePrune = 0;

  constructor(private readonly max = TAKEN_JOBS_MAX) {}

  /** Notes the job as taken at its attempt; false when that attempt of it, or a later one, was taken before. */
  take(job: Pick<BatchJob, 'job_id' | 'attempt' | 'deadline_at'>, now = Date.now()): boolean {
    const before = this.taken.get(job.job_id);
    if (before && before.deadline > now && job.attempt <= before.attempt) return false;
    // Taken again last: the map stays in the order jobs were taken.
    this.taken.delete(job.job_id);
    this.taken.set(job.job_id, { attempt: job.attempt, deadline: Date.parse(job.deadline_at) });
    if (++this.sincePrune >= PRUNE_EVERY) this.prune(now);
    if (this.taken.size > this.max) this.taken.delete(this.taken.keys().next().value!);
    return true;
  }

  private prune(now: number): void {
    this.sincePrune = 0;
    for (const [id, t] of this.taken) if (!(t.deadline > now)) this.taken.delete(id);
  }
}
