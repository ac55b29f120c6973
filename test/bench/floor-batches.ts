/**
 * The batched job protocol as the floors run it, through the real code of both sides: the
 * controller's dispatch splits a pass of jobs into batches (`splitBatches`), seals each batch's
 * secrets once and signs it once (`jobBatch`, `signJson`); the agent checks and opens a batch once,
 * and sends results through its own `ResultsSender` (same caps and flush interval), each event
 * signed once (`signTextDetached`); the controller verifies each event once. A deploy job has its
 * backup stored before it changes anything, through the agent's own backup_store client
 * (floorBackupStore, answerFloorBackups). Nothing else: no job rows, deadlines, logs, `started`
 * events or business logic.
 *
 * Light on purpose: the pipeline floor's agent processes import it (no controller engine here).
 */
import { randomUUID } from 'node:crypto';
import type { JsMsg, NatsConnection, Subscription } from 'nats';
import { BackupStore } from '../../agent/src/backup-store';
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { targetOf } from '../../agent/src/jobs/context';
import { ResultsSender, resultsEventJson } from '../../agent/src/results';
import type { JobRow } from '../../controller/src/jobs/store';
import type { DeviceTarget as ControllerTarget } from '../../controller/src/jobs/ports';
import { jobBatch, splitBatches } from '../../controller/src/jobs/job-message';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  decryptSecrets,
  signJson,
  signJsonDetached,
  signTextDetached,
  signerOf,
  verifyJson,
  type AnyKey,
  type ControllerKey,
  type PublicJwk,
} from '../../shared/src/jobs/crypto';
import type { JobKind } from '../../shared/src/jobs/kinds';
import {
  BatchSecrets,
  JobBatch,
  PROTOCOL_VERSION,
  checkMessage,
  type BackupStoreReply,
  type BackupStoreRequest,
  type BatchJob,
  type JobResult,
  type ResultsEvent,
} from '../../shared/src/jobs/messages';
import { poolConsumer } from '../../shared/src/nats/subjects';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const FLOOR_ORG = 'bench';
export const FLOOR_POOL = 'default';
export const FLOOR_CONSUMER = poolConsumer(FLOOR_ORG, FLOOR_POOL);

/** A job of a floor run: its id (a number, the results table's `device`) and its device. */
export interface FloorJob {
  id: number;
  target: DeviceTarget;
}

/** An agent of the floor's pool as dispatch sees it: the secrets of every batch are sealed to each. */
export interface FloorAgent {
  id: string;
  publicJwk: PublicJwk;
}

/** The controller's view of a device (what dispatch loads), from the driver's. */
function controllerTarget(t: DeviceTarget): ControllerTarget {
  return {
    device_id: t.id,
    name: t.name,
    host: t.host,
    device_type: t.device_type,
    platform: '',
    protocol: '',
    site_id: null,
    profile_id: 'floor',
    ports: t.ports,
    gnmi_tls: t.gnmi_tls,
    gnmi_skip_verify: t.gnmi_skip_verify,
    automation_transport: null,
    ca_certificate: t.ca_certificate ?? null,
    allowed_networks: [],
    ssh_host_key: null,
    gnmi_cert_sha256: null,
    credentials: t.credentials,
  };
}

/**
 * The signed batch messages of `jobs` as dispatch makes them: passes of `passSize` jobs, each
 * split for `agents.length` agents online, sealed to all of them and signed by `controllerKey`.
 */
export async function signedBatches(
  jobs: FloorJob[],
  kind: JobKind,
  agents: FloorAgent[],
  controllerKey: ControllerKey,
  passSize: number,
): Promise<{ id: string; token: string }[]> {
  const recipients = agents.map((a) => ({
    id: a.id,
    org_id: FLOOR_ORG,
    name: a.id,
    site_id: null,
    public_key: a.publicJwk,
    revoked_at: null,
    last_seen_at: null,
  }));
  const deadline = new Date(Date.now() + 600_000);
  const items = jobs.map(({ id, target }) => ({
    job: { id: String(id), kind, params: {}, deadline_at: deadline } as unknown as JobRow,
    target: controllerTarget(target),
    attempt: 1,
  }));
  const out: { id: string; token: string }[] = [];
  for (let i = 0; i < items.length; i += passSize) {
    for (const batch of splitBatches(items.slice(i, i + passSize), agents.length)) {
      const message = await jobBatch(FLOOR_ORG, FLOOR_POOL, batch, recipients);
      out.push({ id: message.batch_id, token: await signJson(message, controllerKey.privateKey, CONTROLLER_SIGN_ALG) });
    }
  }
  return out;
}

/** The agent's side: a batch checked once (signature, shape) and its secrets opened once; its jobs as drivers take them. */
export async function openBatch(
  token: string,
  controllerKey: AnyKey,
  agentId: string,
  decryptKey: AnyKey,
): Promise<{ job: BatchJob; target: DeviceTarget }[]> {
  const batch = checkMessage(JobBatch, await verifyJson(token, controllerKey, CONTROLLER_SIGN_ALG, 'any'), 'job batch');
  const secrets = checkMessage(BatchSecrets, await decryptSecrets(batch.secrets, agentId, decryptKey), 'job batch secrets');
  return batch.jobs.map((job) => ({
    job,
    target: targetOf(job.device, { username: job.device.username, ...secrets.credentials[secrets.of[job.job_id]] }),
  }));
}

/** The agent's results sender: each event of results signed once by the agent's key and handed to `publish` with a fresh id. */
export function floorResultsSender(agentId: string, signKey: AnyKey, publish: (token: string, id: string) => Promise<unknown>): ResultsSender {
  return new ResultsSender(async (results) => {
    await publish(signTextDetached(resultsEventJson(agentId, results), signKey, AGENT_SIGN_ALG, agentId), randomUUID());
  });
}

/** A job's result as the agent sends it (no log lines, host key or certificate: the floors pin none). */
export function floorResult(job: BatchJob, ok: boolean, result: unknown, startedAt: Date): JobResult {
  return {
    job_id: job.job_id,
    attempt: job.attempt,
    status: ok ? 'succeeded' : 'failed',
    error: ok ? null : 'failed',
    result: (result ?? null) as JobResult['result'],
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    logs: [],
    host_key: null,
    gnmi_cert: null,
  };
}

/** A message an agent signed (detached), verified once against its signer's key; null from an unknown agent. */
async function fromAgent<T>(data: Uint8Array, keys: Map<string, AnyKey>): Promise<T | null> {
  const token = decoder.decode(data);
  const key = keys.get(signerOf(token) ?? '');
  return key ? ((await verifyJson(token, key, AGENT_SIGN_ALG, 'detached')) as T) : null;
}

/** The controller's side: a results event verified once against its agent's key; one row per result. */
export async function verifiedRows(m: JsMsg, keys: Map<string, AnyKey>): Promise<{ device: number; ok: boolean; result: string }[]> {
  const event = await fromAgent<ResultsEvent>(m.data, keys);
  if (!event) throw new Error('a results event from an unknown agent');
  return event.results.map((r) => ({ device: Number(r.job_id), ok: r.status === 'succeeded', result: JSON.stringify(r.result) }));
}

/**
 * The agent's backup_store client of the deploy pipeline floor: the agent runtime's own
 * BackupStore (requests of the moment's backups, signed once), asking on `subject`.
 */
export function floorBackupStore(nc: NatsConnection, subject: string, agentId: string, keys: { sign: AnyKey; controller: AnyKey }): BackupStore {
  return new BackupStore({
    agentId,
    link: {
      request: (token, timeoutMs) =>
        nc.request(subject, encoder.encode(token), { timeout: timeoutMs }).then(
          (m) => decoder.decode(m.data),
          () => null,
        ),
    },
    sign: (request) => signJsonDetached(request, keys.sign, AGENT_SIGN_ALG, agentId),
    verify: (token) => verifyJson(token, keys.controller, CONTROLLER_SIGN_ALG),
  });
}

/**
 * The controller's side of the deploy pipeline floor's backup_store requests: each verified once,
 * its backups stored with one insert (a row per backup), one signed reply answering each job
 * `same`. No job, device or earlier-backup checks. Answers the subscription, to close.
 */
export function answerFloorBackups(
  nc: NatsConnection,
  subject: string,
  keys: Map<string, AnyKey>,
  controllerKey: ControllerKey,
  store: (rows: { device: number; ok: boolean; result: string }[]) => Promise<unknown>,
): Subscription {
  return nc.subscribe(subject, {
    callback: (_err, m) =>
      void (async () => {
        const request = await fromAgent<BackupStoreRequest>(m.data, keys);
        if (!request) return;
        await store(request.backups.map((b) => ({ device: Number(b.job_id), ok: true, result: b.backup.text })));
        const reply: BackupStoreReply = {
          v: PROTOCOL_VERSION,
          type: 'backup_stored',
          error: null,
          answers: request.backups.map((b) => ({ job_id: b.job_id, ok: true, backup: null, error: null, same: true })),
        };
        m.respond(encoder.encode(await signJson(reply, controllerKey.privateKey, CONTROLLER_SIGN_ALG)));
      })().catch((err: unknown) => console.error(`a floor backup request failed: ${(err as Error).message}`)),
  });
}
