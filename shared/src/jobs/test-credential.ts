/**
 * The `test_credential` job kind: log in over each transport the device uses and close again.
 * Submitted by POST /api/devices/test-credentials (and the per-device route), run by
 * agent/src/jobs/test-credential.ts, answered from the outcome (nothing is stored).
 */
import { Type, type Static } from '@sinclair/typebox';
import { ErrorCauseSchema, TransportSchema } from '../device/values';

export const TestCredentialParams = Type.Object({
  /** One transport to test; absent: the automation transport (if any), then SSH. */
  transport: Type.Optional(TransportSchema),
});
export type TestCredentialParams = Static<typeof TestCredentialParams>;

/** One transport's login. */
export const TransportCheck = Type.Object({
  transport: TransportSchema,
  /** unavailable: nothing answered on the port (SSH on a device reached over gNMI or NETCONF). */
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('unavailable')]),
  message: Type.String(),
  error_cause: Type.Optional(ErrorCauseSchema),
});
export type TransportCheck = Static<typeof TransportCheck>;

export const TestCredentialResult = Type.Object({
  ok: Type.Boolean(),
  message: Type.String(),
  error_cause: Type.Optional(ErrorCauseSchema),
  /** Each transport tried, automation transport first. */
  transports: Type.Array(TransportCheck),
});
export type TestCredentialResult = Static<typeof TestCredentialResult>;
