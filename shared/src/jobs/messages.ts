/**
 * The job protocol between controller and agents, as TypeBox schemas (one source for the
 * types and the runtime checks). Every message travels as a JWS: job batches signed by the
 * controller (EdDSA, compact), agent events and requests (heartbeats, backups to store, which
 * jobs are still open) signed by the agent (ES256, kid = agent id; events with their JSON
 * unencoded and detached, RFC 7797, see crypto.ts). A job batch carries many jobs of one pool,
 * signed once; their device secrets are one general JWE with one recipient per agent of the pool,
 * so nobody else on NATS can read them. Results come back many to a `results` event, signed once.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MAX_ALLOWED_NETWORKS } from '../device/networks';
import { CertSha256, FetchedConfigSchema, GnmiCert, SshHostKey } from '../device/values';
import { JOB_KINDS } from './kinds';

export const PROTOCOL_VERSION = 1;

export const JobKindSchema = Type.Union(JOB_KINDS.map((k) => Type.Literal(k)));

const Iso = Type.String({ minLength: 10, maxLength: 40 });
const Id = Type.String({ minLength: 1, maxLength: 64 });
/** A job's attempt: the controller stores it in a PostgreSQL integer, so one beyond it is malformed, not a failed statement. */
const Attempt = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** Everything an agent needs to reach the device, except the secrets. */
export const JobDevice = Type.Object({
  id: Id,
  name: Type.String(),
  host: Type.String(),
  device_type: Type.String(),
  ports: Type.Object({ ssh: Type.Integer(), netconf: Type.Integer(), gnmi: Type.Integer() }),
  gnmi_tls: Type.Boolean(),
  gnmi_skip_verify: Type.Boolean(),
  automation_transport: Type.Union([Type.Literal('gnmi'), Type.Literal('netconf'), Type.Null()]),
  username: Type.String(),
  /**
   * The device's pinned SSH host key (trust on first use); SSH and NETCONF sessions refuse any
   * other before authenticating. Null: none pinned yet.
   */
  ssh_host_key: Type.Union([SshHostKey, Type.Null()]),
  /**
   * SHA-256 of the device's pinned gNMI TLS certificate (trust on first use); gNMI over TLS refuses
   * any other before an RPC carries credentials. Null: none pinned yet.
   */
  gnmi_cert_sha256: Type.Union([CertSha256, Type.Null()]),
  /** The profile's private CA (PEM) that TLS sessions to the device trust. Null: the agent's own roots. */
  ca_certificate: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()]),
  /**
   * The connection profile's allowed_networks (normalized CIDRs): the agent resolves the host and
   * opens no session (so sends no credential) to an address outside them. Absent or empty: no limit.
   */
  allowed_networks: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_ALLOWED_NETWORKS })),
});
export type JobDevice = Static<typeof JobDevice>;

/**
 * The capability of an agent that enforces a device's allowed_networks. An agent older than the
 * field ignores it, so a job whose profile has allowed_networks is not sent to a pool with one.
 */
export const ALLOWED_NETWORKS_GUARD = 'guard:allowed_networks';

/** A JWE in general JSON serialization (RFC 7516 §7.2.1). */
export const GeneralJwe = Type.Object(
  {
    protected: Type.Optional(Type.String()),
    unprotected: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    recipients: Type.Array(
      Type.Object(
        { header: Type.Optional(Type.Record(Type.String(), Type.Unknown())), encrypted_key: Type.Optional(Type.String()) },
        { additionalProperties: true },
      ),
    ),
    iv: Type.Optional(Type.String()),
    ciphertext: Type.String(),
    tag: Type.Optional(Type.String()),
    aad: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type GeneralJwe = Static<typeof GeneralJwe>;

/** One job of a batch: everything but the device secrets, which the batch carries sealed for all its jobs. */
export const BatchJob = Type.Object({
  job_id: Id,
  attempt: Attempt,
  kind: JobKindSchema,
  device: JobDevice,
  params: Type.Record(Type.String(), Type.Unknown()),
  deadline_at: Iso,
});
export type BatchJob = Static<typeof BatchJob>;

/**
 * One message to a pool: many jobs (a batch of one is a batch), signed once by the controller.
 * `secrets` is one JWE to the pool's agents whose plaintext is BatchSecrets.
 */
export const JobBatch = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  batch_id: Id,
  org_id: Id,
  pool: Type.String(),
  jobs: Type.Array(BatchJob, { minItems: 1 }),
  secrets: GeneralJwe,
  issued_at: Iso,
});
export type JobBatch = Static<typeof JobBatch>;

/**
 * The plaintext of a batch's secrets: each distinct set of DeviceCredentials (password,
 * private_key, enable_password; devices of one profile share theirs) once, and the index of each
 * job's set.
 */
export const BatchSecrets = Type.Object({
  credentials: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  of: Type.Record(Type.String(), Type.Integer({ minimum: 0 })),
});
export type BatchSecrets = Static<typeof BatchSecrets>;

export const LogLine = Type.Object({
  at: Iso,
  level: Type.Union([Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')]),
  text: Type.String({ maxLength: 4000 }),
});
export type LogLine = Static<typeof LogLine>;

const JobRef = Type.Object({ job_id: Id, attempt: Attempt });

/**
 * Jobs still running a while after they started, and the log lines they wrote meanwhile, of any
 * number of jobs, signed once: the agent sends one every second or so while any job runs long (a
 * quick job sends nothing before its result, which carries its lines and start time).
 */
export const ProgressEvent = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('progress'),
  agent_id: Id,
  started: Type.Array(Type.Object({ job_id: Id, attempt: Attempt, at: Iso })),
  logs: Type.Array(Type.Object({ job_id: Id, attempt: Attempt, lines: Type.Array(LogLine, { minItems: 1 }) })),
});
/** The outcome of one job, as a `results` event carries it. */
export const JobResult = Type.Object({
  job_id: Id,
  attempt: Attempt,
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
  error: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  started_at: Iso,
  finished_at: Iso,
  /** Log lines not yet sent, so a short job needs no message of its own. */
  logs: Type.Array(LogLine),
  /** The SSH host key the job's first SSH or NETCONF session saw (null: no such session). */
  host_key: Type.Union([SshHostKey, Type.Null()]),
  /** The TLS certificate the job's first gNMI-over-TLS session saw (null: no such session). */
  gnmi_cert: Type.Union([GnmiCert, Type.Null()]),
});
export type JobResult = Static<typeof JobResult>;
/** Results of many jobs (of any batches), signed once; the agent sends them as they finish, a few at a time. */
export const ResultsEvent = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('results'),
  agent_id: Id,
  results: Type.Array(JobResult, { minItems: 1 }),
});
/** The agent cannot run these jobs (it is not among the batch secrets' recipients). */
export const RejectedEvent = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('rejected'),
  agent_id: Id,
  jobs: Type.Array(JobRef, { minItems: 1 }),
  reason: Type.Literal('not_recipient'),
});

export const AgentEvent = Type.Union([ProgressEvent, ResultsEvent, RejectedEvent]);
export type ProgressEvent = Static<typeof ProgressEvent>;
export type ResultsEvent = Static<typeof ResultsEvent>;
export type RejectedEvent = Static<typeof RejectedEvent>;
export type AgentEvent = Static<typeof AgentEvent>;

/**
 * A batch delivered again (its agent died, or let it go) may hold jobs whose results were
 * recorded meanwhile: before running any, the agent asks which are still open (over the request
 * channel), and runs only those.
 */
export const OpenJobsRequest = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('open_jobs'),
  agent_id: Id,
  at: Iso,
  jobs: Type.Array(JobRef, { minItems: 1, maxItems: 10_000 }),
});
export type OpenJobsRequest = Static<typeof OpenJobsRequest>;

/** The controller's answer (signed by the controller): the jobs of the request still open at that attempt. */
export const OpenJobsReply = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('open_jobs'),
  ok: Type.Boolean(),
  open: Type.Array(Id),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type OpenJobsReply = Static<typeof OpenJobsReply>;

/** The agent's view of its connections, sent with each heartbeat (shown in GET /api/agents). */
export const HeartbeatHealth = Type.Object({
  nats_connected: Type.Boolean(),
  nats_reconnects: Type.Integer({ minimum: 0 }),
  /** When a controller last answered a heartbeat; null before the first answer. */
  controller_answered_at: Type.Union([Iso, Type.Null()]),
  /** The controller's /healthz over HTTP from the agent; null when the agent has no controller URL. */
  controller_http: Type.Union([
    Type.Object({ ok: Type.Boolean(), error: Type.Union([Type.String({ maxLength: 300 }), Type.Null()]), checked_at: Iso }),
    Type.Null(),
  ]),
});
export type HeartbeatHealth = Static<typeof HeartbeatHealth>;

export const Heartbeat = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('heartbeat'),
  agent_id: Id,
  at: Iso,
  version: Type.String({ maxLength: 100 }),
  capabilities: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
  active_jobs: Type.Integer({ minimum: 0 }),
  max_jobs: Type.Integer({ minimum: 0 }),
  /** Events (results, logs) the agent could not publish yet. */
  pending_events: Type.Integer({ minimum: 0 }),
  health: Type.Optional(HeartbeatHealth),
});
export type Heartbeat = Static<typeof Heartbeat>;

/** The controller's answer to a heartbeat (signed by the controller). */
export const HeartbeatReply = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  agent_id: Id,
  ok: Type.Boolean(),
  revoked: Type.Boolean(),
  heartbeat_interval_ms: Type.Integer({ minimum: 100 }),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type HeartbeatReply = Static<typeof HeartbeatReply>;

/** Jobs' backups to a backup_store request at the most (the agent gathers those of the moment). */
export const BACKUP_STORE_MAX = 64;
/**
 * Bytes of backup text to a backup_store request the agent gathers at the most (one larger
 * backup goes alone): well under NATS max_payload (1 MB by default), and the reply, which may
 * carry the kept backups back instead, stays under it too.
 */
export const BACKUP_STORE_MAX_BYTES = 256 * 1024;

/** One deploy job's pre-deployment backup in a backup_store request. */
export const BackupStoreEntry = Type.Object({
  job_id: Id,
  attempt: Attempt,
  /** The agent keeps its copy: when the backup kept for the job is this one, the answer says `same` instead of sending it back. */
  backup: FetchedConfigSchema,
});
export type BackupStoreEntry = Static<typeof BackupStoreEntry>;

/**
 * Deploy jobs' pre-deployment backups, sent by the agent (over the request channel, like
 * heartbeats) before their jobs change anything: the backups of the moment in one request,
 * signed once. The controller stores the first backup of each job and answers with the stored
 * one, so every attempt of a job (a redelivery after an agent died mid-push included) compares
 * with and restores to the config from before the change. (It replaced a request of one job
 * under the same PROTOCOL_VERSION: agents and controller ship together, and a bump would refuse
 * an older agent's every message, heartbeats included, where this refuses only its backup_store,
 * as malformed, before its job changes anything.)
 */
export const BackupStoreRequest = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('backup_store'),
  agent_id: Id,
  at: Iso,
  backups: Type.Array(BackupStoreEntry, { minItems: 1, maxItems: BACKUP_STORE_MAX }),
});
export type BackupStoreRequest = Static<typeof BackupStoreRequest>;

/** The controller's answer for one job of a backup_store request: ok with the stored backup, or why not. */
export const BackupStoreAnswer = Type.Object({
  job_id: Id,
  ok: Type.Boolean(),
  backup: Type.Union([FetchedConfigSchema, Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  /** Not yet: the job's dispatch has not committed (the agent was quicker), or storing failed; ask again shortly. */
  retry: Type.Optional(Type.Boolean()),
  /** The backup kept for the job is the request's own (a large config crosses NATS once, not twice); `backup` is null. */
  same: Type.Optional(Type.Boolean()),
});
export type BackupStoreAnswer = Static<typeof BackupStoreAnswer>;

/**
 * The controller's reply to a backup_store request (signed by the controller, once): answers[i]
 * answers backups[i]. `error`: the request as a whole was refused (malformed, another agent's),
 * and answers is empty.
 */
export const BackupStoreReply = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('backup_stored'),
  error: Type.Union([Type.String(), Type.Null()]),
  answers: Type.Array(BackupStoreAnswer, { maxItems: BACKUP_STORE_MAX }),
});
export type BackupStoreReply = Static<typeof BackupStoreReply>;

const compiled = new Map<TSchema, ReturnType<typeof TypeCompiler.Compile>>();

/** Parses and checks one message; throws with the first problem when it does not fit. */
export function checkMessage<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)));
  if (check.Check(value)) return value as Static<T>;
  const first = check.Errors(value).First();
  throw new Error(`malformed ${what}: ${first ? `${first.path || '/'} ${first.message}` : 'does not match the protocol'}`);
}

/**
 * NATS operator mode: an agent asks for fresh NATS credentials (a new user JWT for its own nkey)
 * before its current ones expire; the controller answers with the JWT, signed like every reply.
 */
export const NatsCredentialsRequest = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('nats_credentials'),
  agent_id: Id,
  at: Type.String(),
});
export type NatsCredentialsRequest = Static<typeof NatsCredentialsRequest>;

export const NatsCredentialsReply = Type.Object({
  v: Type.Literal(PROTOCOL_VERSION),
  type: Type.Literal('nats_credentials'),
  agent_id: Id,
  ok: Type.Boolean(),
  user_jwt: Type.Union([Type.String(), Type.Null()]),
  user_jwt_expires_at: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type NatsCredentialsReply = Static<typeof NatsCredentialsReply>;
