import type { ErrorSpec } from '../spec';

export const opsErrors = {
  NOT_READY: {
    status: 503,
    message: 'Not ready',
    doc: 'GET /readyz: this replica should not get traffic now. The message and `checks` name the failing part (database, migrations, nats, shutdown).',
  },
  METRICS_DISABLED: {
    status: 404,
    message: 'Metrics are off: set SWITCHBOARD_METRICS_TOKEN to serve GET /metrics',
    doc: 'GET /metrics is served only when SWITCHBOARD_METRICS_TOKEN is set; Prometheus then scrapes it with that bearer token.',
  },
  METRICS_TOKEN_REQUIRED: {
    status: 401,
    message: 'GET /metrics needs the bearer token set in SWITCHBOARD_METRICS_TOKEN',
    doc: 'The Authorization header was missing or did not carry the metrics token (a user access token does not work here).',
  },
} satisfies Record<string, ErrorSpec>;
