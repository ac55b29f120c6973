/**
 * The `backup` job kind: the running configuration by each method asked for (one session per
 * method). Submitted by config pulls and snapshots, run by agent/src/jobs/backup.ts, recorded by
 * the configs area as one config version per method.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BackupMethodResultSchema, BackupMethodSchema } from '../device/backup-method';
import { StructuredTransportSchema } from '../device/values';

export const BackupJobParams = Type.Object({
  methods: Type.Array(BackupMethodSchema, { minItems: 1, maxItems: 2 }),
  /** Transport of the structured method (the profile's automation_transport); null or absent: the device's. */
  structured_transport: Type.Optional(Type.Union([StructuredTransportSchema, Type.Null()])),
});
export type BackupJobParams = Static<typeof BackupJobParams>;

export const BackupJobResult = Type.Object({
  results: Type.Array(BackupMethodResultSchema),
  /** Session transcript; drivers mask credentials, the recorder masks again before storing. */
  transcript: Type.String(),
});
export type BackupJobResult = Static<typeof BackupJobResult>;
