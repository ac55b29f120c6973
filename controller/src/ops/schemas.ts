import { Type } from '@sinclair/typebox';

export const Health = Type.Object({
  status: Type.Literal('ok'),
  uptime_seconds: Type.Number(),
});

const Check = Type.Object({
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
  latency_ms: Type.Optional(Type.Number()),
  skipped: Type.Optional(Type.String()),
});

export const Checks = Type.Object({ database: Check, migrations: Check, nats: Check, shutdown: Check });

export const Ready = Type.Object({ status: Type.Literal('ready'), checks: Checks });

export const NotReady = Type.Object(
  { error: Type.String(), code: Type.String(), checks: Checks },
  { description: 'Not ready: `error` names the failing parts, `checks` has each part.' },
);

export const MetricsText = Type.String({ description: 'Prometheus text exposition format 0.0.4.' });
