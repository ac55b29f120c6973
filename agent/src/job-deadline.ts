/**
 * A job's deadline on the agent: how long its kind may run, and the failure answered for it when
 * that time is up and the kind has not ended.
 */
import type { JobResultOf } from './jobs/context';

/** A result is sent a little before the controller's deadline so it is not taken for lost. */
export const DEADLINE_MARGIN_MS = 1_500;
/** The abort reason once a job has ended: built once, not a new AbortError per job. */
export const JOB_ENDED = new Error('the job has ended');

/** The time a job may run (at least 100 ms): until its deadline, less a tenth of the time left up to DEADLINE_MARGIN_MS. */
export function jobBudget(deadline: number): number {
  return Math.max(100, deadline - Date.now() - Math.min(DEADLINE_MARGIN_MS, (deadline - Date.now()) / 10));
}

/** The failure of a job whose budget ran out (its signal aborted); never settles when the job ended first (JOB_ENDED). */
export function deadlineFailure(signal: AbortSignal, budget: number): Promise<JobResultOf> {
  return new Promise<JobResultOf>((resolve) =>
    signal.addEventListener('abort', () => {
      if (signal.reason === JOB_ENDED) return; // the job ended first: nothing to answer for
      // Give the kind a moment to report what it has (sessions are being closed) before answering for it.
      setTimeout(
        () =>
          resolve({
            status: 'failed',
            error: `The job did not finish before its deadline (${Math.round(budget / 1000)} s on the agent)`,
            result: null,
          }),
        1_000,
      );
    }),
  );
}
