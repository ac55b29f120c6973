import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../http/schemas';

export const AgentStatus = Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('degraded')]);

export const Agent = Type.Object({
  id: Uuid,
  name: Type.String(),
  site_id: Nullable(Uuid),
  pool: Type.String({ description: 'The site id, or "default" for the organization\'s default pool.' }),
  status: AgentStatus,
  last_seen_at: Nullable(Timestamp),
  version: Type.String(),
  active_jobs: Type.Integer(),
  max_jobs: Type.Integer({ description: 'Sessions the agent runs at once (SWITCHBOARD_AGENT_CONCURRENCY).' }),
  completed_jobs: Type.Integer(),
  failed_jobs: Type.Integer(),
  capabilities: Type.Array(Type.String()),
  health: Nullable(
    Type.Object(
      {
        nats_connected: Type.Boolean(),
        nats_reconnects: Type.Integer(),
        controller_answered_at: Nullable(Type.String()),
        controller_http: Nullable(Type.Object({ ok: Type.Boolean(), error: Nullable(Type.String()), checked_at: Type.String() })),
      },
      {
        description:
          'What the agent last reported in its heartbeat about its connections: NATS (connected, reconnects), when a controller last ' +
          'answered it, and the controller URL over HTTP (null when the agent has none). Null before the first report.',
      },
    ),
  ),
  enrolled: Type.Boolean(),
  enrolled_at: Nullable(Timestamp),
  builtin: Type.Boolean(),
  created_at: Timestamp,
});

export const NewAgentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    site_id: Nullable(Uuid),
  },
  { additionalProperties: false },
);

export const NewAgent = Type.Composite([
  Agent,
  Type.Object({
    enrollment_token: Type.String({ description: 'One-time token for POST /api/agents/enroll; shown only here.' }),
    enrollment_expires_at: Timestamp,
  }),
]);

export const EnrollBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    public_key: Type.Union([Type.String({ maxLength: 4000 }), Type.Object({}, { additionalProperties: true })], {
      description: "The agent's EC P-256 public key: a JWK object or an SPKI PEM block.",
    }),
    nats_public_key: Type.Optional(
      Type.String({
        maxLength: 100,
        description: "The agent's NATS user nkey (public part); required when the controller runs NATS in operator mode.",
      }),
    ),
    version: Type.String({ maxLength: 100 }),
    capabilities: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
  },
  { additionalProperties: false },
);

export const Enrollment = Type.Object({
  agent_id: Uuid,
  org_id: Uuid,
  name: Type.String(),
  site_id: Nullable(Uuid),
  pool: Type.String(),
  heartbeat_interval_ms: Type.Integer(),
  controller_key: Type.Object({}, { additionalProperties: true, description: 'Ed25519 JWK that signs job messages.' }),
  nats: Type.Object({
    prefix: Type.String(),
    jobs_stream: Type.String(),
    jobs_subject: Type.String(),
    jobs_consumer: Type.String(),
    results_stream: Type.String(),
    results_subject: Type.String(),
    heartbeat_subject: Type.String(),
    ack_wait_ms: Type.Integer(),
    // NATS operator mode only: the agent's user JWT (for its own nkey) and the inbox prefix it must use.
    user_jwt: Type.Optional(Type.String()),
    user_jwt_expires_at: Type.Optional(Type.String()),
    inbox_prefix: Type.Optional(Type.String()),
  }),
});

export const SiteHealth = Type.Object({
  site_id: Uuid,
  name: Type.String(),
  pool: Type.String({ description: 'Where the site\'s jobs go: the site id when it has agents, else "default".' }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down'), Type.Literal('no_agents')]),
  agents: Type.Array(Agent),
  online_agents: Type.Integer(),
  devices: Type.Object({
    total: Type.Integer(),
    reachable: Type.Integer(),
    unreachable: Type.Integer(),
    unknown: Type.Integer({ description: 'No finished job in the last 24 hours.' }),
  }),
  unreachable_devices: Type.Array(Type.Object({ id: Uuid, name: Type.String(), error: Nullable(Type.String()), kind: Type.String(), at: Timestamp })),
});

const PoolStatusSchema = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down'), Type.Literal('no_agents')]);

const FailingDevice = Type.Object({ id: Uuid, name: Type.String(), error: Nullable(Type.String()), kind: Type.String(), at: Timestamp });

/** One panel of GET /api/sites/health: a site, or (site_id null) the default pool. */
export const PoolHealth = Type.Object({
  site_id: Type.Union([Uuid, Type.Null()], { description: 'null: the default pool.' }),
  name: Type.String(),
  pool: Type.String({ description: 'Where these devices\' jobs go: the site id when the site has agents, else "default".' }),
  status: PoolStatusSchema,
  agents: Type.Array(Agent),
  online_agents: Type.Integer({ description: 'Agents not offline (online or degraded).' }),
  devices: Type.Object({
    total: Type.Integer({ description: 'The default pool counts devices without a site and those of sites without agents.' }),
    reachable: Type.Integer({ description: 'Latest finished job in the last 24 hours succeeded.' }),
    unreachable: Type.Integer({ description: 'Latest finished job in the last 24 hours failed.' }),
    unknown: Type.Integer({ description: 'No finished job in the last 24 hours.' }),
    backed_up_24h: Type.Integer({ description: 'Devices with a successful backup (config version) in the last 24 hours.' }),
  }),
  failing_devices: Type.Array(FailingDevice, { description: 'The newest failures among unreachable devices (at most 5).' }),
  last_snapshot: Type.Union(
    [
      Type.Object({
        id: Uuid,
        name: Type.String(),
        status: Type.String(),
        created_at: Timestamp,
        succeeded: Type.Integer(),
        failed: Type.Integer(),
        pending: Type.Integer(),
      }),
      Type.Null(),
    ],
    {
      description:
        "The newest of the organization's last 10 snapshots that held any of these devices, with their outcomes in it; null when none did.",
    },
  ),
});

export const SitesHealth = Type.Object({
  generated_at: Timestamp,
  pools: Type.Array(PoolHealth, { description: 'The default pool first, then every site by name.' }),
});
