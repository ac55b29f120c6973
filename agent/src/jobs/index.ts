/**
 * The job kinds this agent runs, one runner per kind (each area adds its kind here). A job of a
 * kind without an entry fails with a message naming the kind and the agent version.
 */
import type { JobKindName } from '../../../shared/src/jobs/messages';
import { runPoll } from '../discovery/poll-job';
import { runBackup } from './backup';
import { runDeploy, runRollback } from './deploy';
import { runDryRun } from './dry-run';
import type { JobKindRunner } from './context';
import { runTestCredential } from './test-credential';

export const KIND_RUNNERS: Partial<Record<JobKindName, JobKindRunner>> = {
  backup: runBackup,
  test_credential: runTestCredential,
  deploy: runDeploy,
  rollback: runRollback,
  poll: runPoll,
  dry_run: runDryRun,
};

export type { JobContext, JobKindRunner, JobResultOf } from './context';
