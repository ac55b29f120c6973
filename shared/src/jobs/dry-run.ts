/**
 * The `dry_run` job kind: what a deployment would change on one device, computed without
 * changing it. Its own kind (not a flag on `deploy`) so that an agent that does not know it
 * refuses the job instead of pushing the change.
 */

/** One rendered service, as a deploy job carries it. */
export interface DryRunChange {
  target_path?: string | null;
  operation: 'replace' | 'merge' | 'delete';
  config_format: 'cli' | 'xml' | 'json';
  config: string;
}

export interface DryRunParams {
  deployment_id: string;
  transport: 'gnmi' | 'netconf' | 'ssh';
  changes: DryRunChange[];
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
