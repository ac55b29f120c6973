/**
 * The two ways a running configuration is backed up, and what each gives: `cli` over the SSH
 * CLI, `structured` over the profile's automation transport (NETCONF or gNMI). Each method is
 * reported on its own, so a failed structured pull never hides a good CLI one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorCauseSchema, FetchedConfigSchema } from './values';

export const BackupMethodSchema = Type.Union([Type.Literal('cli'), Type.Literal('structured')]);
export type BackupMethod = Static<typeof BackupMethodSchema>;
/** What a pull asks for: one method, or both. */
export type PullMethod = BackupMethod | 'both';

export const methodsOf = (method: PullMethod): BackupMethod[] => (method === 'both' ? ['cli', 'structured'] : [method]);

/** One method's outcome in a `backup` result: the config, or why not. */
export const BackupMethodResultSchema = Type.Object({
  method: BackupMethodSchema,
  config: Type.Optional(FetchedConfigSchema),
  error: Type.Optional(Type.String()),
  /** DriverError cause (auth, timeout, refused, protocol, device, hostkey) when the method failed. */
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type BackupMethodResult = Static<typeof BackupMethodResultSchema>;
