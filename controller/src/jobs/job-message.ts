/**
 * What dispatch sends to a pool: its jobs in batches (many jobs to a message, signed once), each
 * with the devices as the agent needs them, the jobs' parameters, and the devices' secrets sealed
 * once per batch (one JWE to the pool's agents).
 */
import { randomUUID } from 'node:crypto';
import { encryptSecrets, type PublicJwk } from '../../../shared/src/jobs/crypto';
import { PROTOCOL_VERSION, type BatchJob, type BatchSecrets, type JobBatch } from '../../../shared/src/jobs/messages';
import type { AgentIdentityRow, DeviceTarget } from './ports';
import type { JobRow } from './store';

/**
 * Jobs to a batch at most. Past a few dozen, a batch saves little more (one signature and one
 * sealing per message), while an agent holds a whole batch: smaller batches spread a pool's
 * work more evenly across its agents, and leave the last agent a shorter tail.
 */
export const BATCH_MAX_JOBS = 50;
/**
 * Bytes of a batch's JSON at most (before signing: the compact JWS grows it by a third). NATS
 * refuses messages over max_payload (1 MB by default); this stays well under it.
 */
export const BATCH_MAX_BYTES = 192 * 1024;

/** A job ready to go: its row, its device loaded with credentials, and the attempt it is sent as. */
export interface Outgoing {
  job: JobRow;
  target: DeviceTarget;
  attempt: number;
}

/** The job as a batch carries it (the secrets go in the batch's JWE). */
function batchJob({ job, target, attempt }: Outgoing): BatchJob {
  return {
    job_id: job.id,
    attempt,
    kind: job.kind,
    device: {
      id: target.device_id,
      name: target.name,
      host: target.host,
      device_type: target.device_type,
      ports: target.ports,
      gnmi_tls: target.gnmi_tls,
      gnmi_skip_verify: target.gnmi_skip_verify,
      automation_transport: target.automation_transport,
      username: target.credentials.username,
      ssh_host_key: target.ssh_host_key,
      gnmi_cert_sha256: target.gnmi_cert_sha256,
      ca_certificate: target.ca_certificate,
      // Only when the profile limits them: a batch of unlimited devices is as it was.
      ...(target.allowed_networks.length > 0 && { allowed_networks: target.allowed_networks }),
    },
    params: job.params,
    deadline_at: job.deadline_at.toISOString(),
  };
}

/** The secrets of a target without its username (which travels in the clear with the device). */
function secretsOf(target: DeviceTarget): Record<string, unknown> {
  const { username: _username, ...secrets } = target.credentials;
  return secrets;
}

/**
 * Splits the jobs of one pool into batches of at most BATCH_MAX_JOBS jobs and BATCH_MAX_BYTES
 * (device, params and each distinct credential set counted once, as they travel), and into at
 * least as many batches as the pool has agents online: each agent takes a whole batch, so a
 * few jobs are shared out instead of going to one agent while the others wait.
 */
export function splitBatches(items: Outgoing[], agentsOnline: number): Outgoing[][] {
  const maxJobs = Math.min(BATCH_MAX_JOBS, Math.max(1, Math.ceil(items.length / Math.max(1, agentsOnline))));
  const batches: Outgoing[][] = [];
  let current: Outgoing[] = [];
  let bytes = 0;
  let seen = new Set<string>();
  for (const item of items) {
    const credentials = JSON.stringify(secretsOf(item.target));
    const size = JSON.stringify(batchJob(item)).length + (seen.has(credentials) ? 0 : credentials.length * 2);
    if (current.length > 0 && (current.length >= maxJobs || bytes + size > BATCH_MAX_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
      seen = new Set();
    }
    current.push(item);
    bytes += size;
    seen.add(credentials);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** The message of one batch for the agents of `pool`, its secrets sealed to `recipients`. */
export async function jobBatch(orgId: string, pool: string, items: Outgoing[], recipients: AgentIdentityRow[]): Promise<JobBatch> {
  const plaintext: BatchSecrets = { credentials: [], of: {} };
  const index = new Map<string, number>();
  for (const { job, target } of items) {
    const secrets = secretsOf(target);
    const key = JSON.stringify(secrets);
    let i = index.get(key);
    if (i === undefined) index.set(key, (i = plaintext.credentials.push(secrets) - 1));
    plaintext.of[job.id] = i;
  }
  return {
    v: PROTOCOL_VERSION,
    batch_id: randomUUID(),
    org_id: orgId,
    pool,
    jobs: items.map(batchJob),
    secrets: await encryptSecrets(
      plaintext,
      recipients.map((r) => ({ kid: r.id, jwk: r.public_key as PublicJwk })),
    ),
    issued_at: new Date().toISOString(),
  };
}
