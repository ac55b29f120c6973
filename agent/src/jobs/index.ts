/**
 * The job kinds this agent runs, one runner per kind (each area adds its kind here). A job of a
 * kind without an entry fails with a message naming the kind and the agent version.
 */
import type { JobKind } from '../../../shared/src/jobs/kinds';
import { runPoll } from '../discovery/poll-job';
import { runBackup } from './backup';
import { runDeploy, runRollback } from './deploy';
import { runDryRun } from './dry-run';
import type { JobContext, JobKindRunner, JobResultOf } from './context';
import { runTestCredential } from './test-credential';

export const KIND_RUNNERS: { [K in JobKind]?: JobKindRunner<K> } = {
  backup: runBackup,
  test_credential: runTestCredential,
  deploy: runDeploy,
  rollback: runRollback,
  poll: runPoll,
  dry_run: runDryRun,
};

/**
 * The runner of `kind`, taking a context whose params were checked against that kind's schema
 * (so the one cast here is what the check established).
 */
export function runnerOf(kind: JobKind): ((ctx: JobContext) => Promise<JobResultOf>) | undefined {
  return KIND_RUNNERS[kind] as ((ctx: JobContext) => Promise<JobResultOf>) | undefined;
}

export type { JobContext, JobKindRunner, JobResultOf } from './context';
