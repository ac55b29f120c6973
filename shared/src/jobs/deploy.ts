/**
 * Params and results of the deployment job kinds, declared once for the controller (which builds
 * the params and records the results) and the agent (which runs them): `deploy`, `rollback` and
 * `dry_run`. `dry_run` is its own kind (not a flag on `deploy`) so that an agent that does not
 * know it refuses the job instead of pushing the change.
 */
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { parsePath } from '../device/gnmi-path';
import { ConfigFormatSchema, EditOperationSchema, ErrorCauseSchema, FetchedConfigSchema, TransportSchema } from '../device/values';

/** One rendered service as a job carries it. */
export const DeployChange = Type.Object({
  target_path: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  operation: EditOperationSchema,
  config_format: ConfigFormatSchema,
  config: Type.String(),
});
export type DeployChange = Static<typeof DeployChange>;

export const DeployTransportSchema = TransportSchema;
export type DeployTransport = Static<typeof DeployTransportSchema>;

/**
 * Values of the deployment's secret variables that the changes hold: the agent masks them in every
 * line and error it reports, as it masks the device's credentials (a refused line is quoted).
 */
const Secrets = Type.Optional(Type.Array(Type.String(), { maxItems: 1000 }));

export const DeployParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  changes: Type.Optional(Type.Array(DeployChange)),
  secrets: Secrets,
  /** Read the running config after the push (default true). */
  verify: Type.Optional(Type.Boolean()),
});
export type DeployParams = Static<typeof DeployParams>;

/** The pre-deployment backup is not part of it: the controller stored it before the push (backup_store request). */
export const DeployResult = Type.Object({
  /** True once the device accepted the change set. */
  applied: Type.Boolean(),
  verified: Type.Boolean(),
  /** Whether the running config differs from the backup after the push. */
  changed: Type.Union([Type.Boolean(), Type.Null()]),
  /** A partly applied change was undone from the backup in the same session (true), or could not be (false). */
  restored: Type.Optional(Type.Boolean()),
  /**
   * SHA-256 (hex) of the running config as the verify read it: what this deployment left on the
   * device. A later restore or rollback puts the backup back only while the device still has it.
   */
  after_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  /** DriverError cause when something failed (auth, timeout, refused, protocol, device). */
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type DeployResult = Static<typeof DeployResult>;

export const RollbackParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  backup: FetchedConfigSchema,
  purpose: Type.Union([Type.Literal('restore'), Type.Literal('rollback')]),
  /**
   * SHA-256 (hex) of the config the deployment left on the device: the agent puts the backup back
   * only if the running config still hashes to it, so that a restore or rollback never silently
   * undoes a later change (another deployment's, or one made by hand). Absent: no check (the
   * deployment's verify did not read the device, or the rollback was forced).
   */
  expect_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  /**
   * The target paths the deployment changed on the device (restoreScope). A driver that can put
   * back part of a configuration (gNMI) puts back only these subtrees; absent: the whole backup.
   */
  paths: Type.Optional(Type.Array(Type.String())),
});
export type RollbackParams = Static<typeof RollbackParams>;

export const RollbackResult = Type.Object({
  restored: Type.Boolean(),
  /** The running config equals the backup text after the restore. */
  matches: Type.Optional(Type.Boolean()),
  /** Nothing was pushed: the running config is no longer the one the deployment left (see expect_sha256). */
  changed_since: Type.Optional(Type.Boolean()),
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type RollbackResult = Static<typeof RollbackResult>;

export const DryRunParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  changes: Type.Array(DeployChange),
  secrets: Secrets,
});
export type DryRunParams = Static<typeof DryRunParams>;

/**
 * How the "after" side was obtained: `device` (the device computed it: NETCONF candidate),
 * `local` (the agent applied the change to the fetched config the way the protocol defines it:
 * gNMI), `approximate` (the agent typed the CLI lines into a model of the config).
 */
export const DryRunExactnessSchema = Type.Union([Type.Literal('device'), Type.Literal('local'), Type.Literal('approximate')]);
export type DryRunExactness = Static<typeof DryRunExactnessSchema>;

export const DryRunResult = Type.Object({
  /** Unified diff of the running config after the change against now; '' when nothing would change. */
  diff: Type.String(),
  changed: Type.Boolean(),
  additions: Type.Integer({ minimum: 0 }),
  deletions: Type.Integer({ minimum: 0 }),
  exactness: DryRunExactnessSchema,
  /** One sentence on how the diff was computed, for the deployment log. */
  method: Type.String(),
});
export type DryRunResult = Static<typeof DryRunResult>;

function namesSubtree(path: string): boolean {
  try {
    return parsePath(path).elem.length > 0;
  } catch {
    return false; // not a path this scope can name: the whole backup goes back
  }
}

/**
 * The subtrees a change set touches, for putting the backup back there and nowhere else: a
 * backup read from the root may not hold everything the device has (gNMI: what the target does
 * not model under the default origin), and replacing the root with it would remove the rest.
 * Undefined when a change has no target path (it may touch anything): then all of it goes back.
 */
export function restoreScope(changes: Pick<DeployChange, 'target_path'>[]): string[] | undefined {
  const paths = changes.map((c) => c.target_path?.trim() ?? '');
  return paths.length > 0 && paths.every(namesSubtree) ? [...new Set(paths)] : undefined;
}

/**
 * What a device's running config is remembered by (the deploy's verify read, a rollback's
 * expectation): its SHA-256, hex, so the controller keeps a hash rather than a second copy.
 */
export function configDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
