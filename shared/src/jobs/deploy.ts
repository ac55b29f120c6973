/**
 * Params and results of the deployment job kinds, declared once for the controller (which builds
 * the params and records the results) and the agent (which runs them): `deploy`, `rollback` and
 * `dry_run`. `dry_run` is its own kind (not a flag on `deploy`) so that an agent that does not
 * know it refuses the job instead of pushing the change.
 */
import { Type, type Static } from '@sinclair/typebox';
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

export const DeployParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  changes: Type.Optional(Type.Array(DeployChange)),
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
  /** DriverError cause when something failed (auth, timeout, refused, protocol, device). */
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type DeployResult = Static<typeof DeployResult>;

export const RollbackParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  backup: FetchedConfigSchema,
  purpose: Type.Union([Type.Literal('restore'), Type.Literal('rollback')]),
});
export type RollbackParams = Static<typeof RollbackParams>;

export const RollbackResult = Type.Object({
  restored: Type.Boolean(),
  /** The running config equals the backup text after the restore. */
  matches: Type.Optional(Type.Boolean()),
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type RollbackResult = Static<typeof RollbackResult>;

export const DryRunParams = Type.Object({
  deployment_id: Type.String(),
  transport: DeployTransportSchema,
  changes: Type.Array(DeployChange),
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
