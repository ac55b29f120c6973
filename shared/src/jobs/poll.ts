/**
 * The `poll` job kind (discovery): one session to the device, over gNMI or the SSH CLI, that
 * collects interfaces, neighbors, ARP, MAC and VLAN tables. Submitted by the discovery
 * scheduler and POST /api/discovery/..., run by agent/src/discovery/poll-job.ts, recorded by the
 * discovery area.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DiscoveryRecords, SectionResult } from '../discovery/records';
import { ErrorCauseSchema } from '../device/values';

export const PollTransportSchema = Type.Union([Type.Literal('ssh'), Type.Literal('gnmi')]);
export type PollTransport = Static<typeof PollTransportSchema>;

export const PollParams = Type.Object({
  /** gnmi when the device's profile automates over gNMI, else ssh (the controller decides). */
  transport: PollTransportSchema,
});
export type PollParams = Static<typeof PollParams>;

export const PollResult = Type.Object({
  transport: PollTransportSchema,
  sections: Type.Array(SectionResult),
  /** null when the session failed before anything was collected. */
  records: Type.Union([DiscoveryRecords, Type.Null()]),
  /** DriverError cause when the session failed (null: not a driver error). */
  error_cause: Type.Optional(Type.Union([ErrorCauseSchema, Type.Null()])),
});
export type PollResult = Static<typeof PollResult>;
