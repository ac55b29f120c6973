/**
 * Every job kind with its contract: the params the controller submits and the result the agent
 * answers, as TypeBox schemas. The controller's `submit`, its outcome handlers and the agent's
 * runner table are typed over this map, so a field renamed on one side fails the typecheck; at
 * run time the controller checks each result against its kind's schema once (an agent of
 * another build that answers something else fails the job with the reason).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { BackupJobParams, BackupJobResult } from './backup';
import { DeployParams, DeployResult, DryRunParams, DryRunResult, RollbackParams, RollbackResult } from './deploy';
import { PollParams, PollResult } from './poll';
import { TestCredentialParams, TestCredentialResult } from './test-credential';

export const JobKinds = {
  backup: { params: BackupJobParams, result: BackupJobResult },
  test_credential: { params: TestCredentialParams, result: TestCredentialResult },
  deploy: { params: DeployParams, result: DeployResult },
  rollback: { params: RollbackParams, result: RollbackResult },
  poll: { params: PollParams, result: PollResult },
  dry_run: { params: DryRunParams, result: DryRunResult },
} satisfies Record<string, { params: TSchema; result: TSchema }>;

export type JobKind = keyof typeof JobKinds;
export const JOB_KINDS = Object.keys(JobKinds) as JobKind[];
export type JobParams<K extends JobKind> = Static<(typeof JobKinds)[K]['params']>;
export type JobResult<K extends JobKind> = Static<(typeof JobKinds)[K]['result']>;

export const isJobKind = (kind: string): kind is JobKind => Object.hasOwn(JobKinds, kind);

const checks = new Map<TSchema, TypeCheck<TSchema>>();

/** Why `value` does not fit `schema` (its first problem, with the path), or null when it fits. */
function misfit(schema: TSchema, value: unknown): string | null {
  let check = checks.get(schema);
  if (!check) checks.set(schema, (check = TypeCompiler.Compile(schema)));
  if (check.Check(value)) return null;
  const first = check.Errors(value).First();
  return first ? `${first.path || '/'} ${first.message}` : 'it does not match';
}

/** Why a `kind` result does not fit the kind's contract, or null when it does. */
export const resultMisfit = (kind: JobKind, result: unknown): string | null => misfit(JobKinds[kind].result, result);

/** Why `kind` params do not fit the kind's contract, or null when they do. */
export const paramsMisfit = (kind: JobKind, params: unknown): string | null => misfit(JobKinds[kind].params, params);
