/**
 * What a dispatched job carries to its agent: the device as the agent needs it, the job's
 * parameters, and the device's secrets sealed (JWE) to the agents of its pool.
 */
import { createHash } from 'node:crypto';
import { encryptSecrets, type PublicJwk } from '../../../shared/src/jobs/crypto';
import { PROTOCOL_VERSION, type GeneralJwe, type JobMessage } from '../../../shared/src/jobs/messages';
import type { AgentIdentityRow, DeviceTarget } from './ports';
import type { JobRow } from './store';

/** Sealed secrets are reused this long: profiles are shared, so one JWE serves many jobs. */
const SEALED_FOR_MS = 60_000;
const SEALED_MAX = 1000;

/** Device secrets sealed to the pool's agents, one JWE per profile, secrets and recipients. */
export class SecretSealer {
  private readonly sealed = new Map<string, { at: number; jwe: Promise<GeneralJwe> }>();

  seal(target: DeviceTarget, recipients: AgentIdentityRow[]): Promise<GeneralJwe> {
    const { username: _username, ...secrets } = target.credentials;
    const digest = createHash('sha256').update(JSON.stringify(secrets)).digest('base64url');
    const key = `${target.profile_id}:${digest}:${recipients.map((r) => `${r.id}.${r.public_key!.x}`).join(',')}`;
    const now = Date.now();
    const hit = this.sealed.get(key);
    if (hit && now - hit.at < SEALED_FOR_MS) return hit.jwe;
    if (this.sealed.size > SEALED_MAX) this.sealed.clear();
    const jwe = encryptSecrets(
      secrets,
      recipients.map((r) => ({ kid: r.id, jwk: r.public_key as PublicJwk })),
    );
    this.sealed.set(key, { at: now, jwe });
    jwe.catch(() => this.sealed.delete(key));
    return jwe;
  }
}

/** The message of one attempt of `job` on `target`, for the agents of `pool`. */
export function jobMessage(job: JobRow, attempt: number, target: DeviceTarget, pool: string, secrets: GeneralJwe): JobMessage {
  return {
    v: PROTOCOL_VERSION,
    job_id: job.id,
    attempt,
    kind: job.kind,
    org_id: job.org_id,
    pool,
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
      // Only once pinned (absent: the agent accepts and reports what the device shows).
      ...(target.ssh_host_key ? { ssh_host_key: target.ssh_host_key } : {}),
      ...(target.gnmi_cert_sha256 ? { gnmi_cert_sha256: target.gnmi_cert_sha256 } : {}),
      ...(target.ca_certificate ? { ca_certificate: target.ca_certificate } : {}),
    },
    params: job.params,
    secrets,
    deadline_at: job.deadline_at.toISOString(),
    issued_at: new Date().toISOString(),
  };
}
