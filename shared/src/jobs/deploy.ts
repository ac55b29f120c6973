/**
 * Params and results of the deployment job kinds, declared once for the controller (which builds
 * the params and records the results) and the agent (which runs them): `deploy`, `rollback` and
 * `dry_run`. `dry_run` is its own kind (not a flag on `deploy`) so that an agent that does not
 * know it refuses the job instead of pushing the change.
 */
import type { Static } from '@sinclair/typebox';
import type { FetchedConfigSchema } from './messages';

type FetchedConfig = Static<typeof FetchedConfigSchema>;

/** One rendered service as a job carries it. */
export interface DeployChange {
  target_path?: string | null;
  operation: 'replace' | 'merge' | 'delete';
  config_format: 'cli' | 'xml' | 'json';
  config: string;
}

export type DeployTransport = 'gnmi' | 'netconf' | 'ssh';

export interface DeployParams {
  deployment_id: string;
  transport: DeployTransport;
  phase?: 'single' | 'backup' | 'push';
  changes?: DeployChange[];
  /** push: the pre-deployment backup the controller stored from the backup phase. */
  backup?: FetchedConfig;
  /** Read the running config after the push (default true). */
  verify?: boolean;
}

export interface DeployResult {
  phase: 'backup' | 'push';
  /** backup phase (or a push without a stored backup): the running config before anything changed. */
  backup: FetchedConfig | null;
  /** True once the device accepted the change set. */
  applied: boolean;
  verified: boolean;
  /** Whether the running config differs from the backup after the push. */
  changed: boolean | null;
  /** A partly applied change was undone from the backup in the same session (true), or could not be (false). */
  restored?: boolean;
  /** DriverError cause when something failed (auth, timeout, refused, protocol, device). */
  error_cause?: string;
}

export interface RollbackParams {
  deployment_id: string;
  transport: DeployTransport;
  backup: FetchedConfig;
  purpose: 'restore' | 'rollback';
}

export interface DryRunParams {
  deployment_id: string;
  transport: DeployTransport;
  changes: DeployChange[];
}

/**
 * How the "after" side was obtained: `device` (the device computed it: NETCONF candidate),
 * `local` (the agent applied the change to the fetched config the way the protocol defines it:
 * gNMI), `approximate` (the agent typed the CLI lines into a model of the config).
 */
export type DryRunExactness = 'device' | 'local' | 'approximate';

export interface DryRunResult {
  /** Unified diff of the running config after the change against now; '' when nothing would change. */
  diff: string;
  changed: boolean;
  additions: number;
  deletions: number;
  exactness: DryRunExactness;
  /** One sentence on how the diff was computed, for the deployment log. */
  method: string;
}
