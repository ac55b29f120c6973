import type { Db } from '../db/knex';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import type { DeviceTarget } from '../jobs/ports';

export type { DeviceTarget } from '../jobs/ports';

/**
 * Loads devices of one organization with their connection profile and decrypted credentials,
 * in one query. Ids of other organizations or unknown ids are left out (compare lengths to
 * detect them); the order follows deviceIds, repeated ids once. For job dispatch only: seal the result to the
 * agent's key before it leaves the controller.
 */
export async function loadDeviceTargets(db: Db, secrets: SecretBox, orgId: string, deviceIds: string[]): Promise<DeviceTarget[]> {
  if (deviceIds.length === 0) return [];
  const rows = await db('devices as d')
    .join('connection_profiles as p', 'p.id', 'd.profile_id')
    .where('d.org_id', orgId)
    .whereRaw('d.id = ANY(?::uuid[])', [deviceIds])
    .select(
      'd.id',
      'd.name',
      'd.host',
      'd.device_type',
      'd.platform',
      'd.protocol',
      'd.site_id',
      'd.profile_id',
      'd.ssh_host_key_sha256',
      'd.ssh_host_key_type',
      'd.gnmi_cert_sha256',
      'p.username',
      'p.password_enc',
      'p.private_key_enc',
      'p.enable_password_enc',
      'p.ssh_port',
      'p.netconf_port',
      'p.gnmi_port',
      'p.gnmi_tls',
      'p.gnmi_skip_verify',
      'p.automation_transport',
      'p.ca_certificate',
      'p.allowed_networks',
    );
  // Profiles are shared by many devices: open each sealed value once.
  const opened = new Map<string, Promise<string>>();
  const open = (sealed: string | null): Promise<string | undefined> => {
    if (sealed === null) return Promise.resolve(undefined);
    if (!opened.has(sealed)) opened.set(sealed, secrets.open(sealed));
    return opened.get(sealed)!;
  };
  const byId = new Map<string, DeviceTarget>();
  for (const row of rows) {
    byId.set(row.id, {
      device_id: row.id,
      name: row.name,
      host: row.host,
      device_type: row.device_type,
      platform: row.platform,
      protocol: row.protocol,
      site_id: row.site_id,
      profile_id: row.profile_id,
      ports: { ssh: row.ssh_port, netconf: row.netconf_port, gnmi: row.gnmi_port },
      gnmi_tls: row.gnmi_tls,
      gnmi_skip_verify: row.gnmi_skip_verify,
      automation_transport: row.automation_transport,
      ca_certificate: row.ca_certificate ?? null,
      allowed_networks: row.allowed_networks ?? [],
      ssh_host_key: row.ssh_host_key_sha256 ? { type: row.ssh_host_key_type ?? 'unknown', fingerprint: row.ssh_host_key_sha256 } : null,
      gnmi_cert_sha256: row.gnmi_cert_sha256 ?? null,
      credentials: {
        username: row.username,
        ...present('password', await open(row.password_enc)),
        ...present('private_key', await open(row.private_key_enc)),
        ...present('enable_password', await open(row.enable_password_enc)),
      },
    });
  }
  return [...new Set(deviceIds)].flatMap((id) => byId.get(id) ?? []);
}

/** A secret the profile has, as a credentials field; nothing for one it does not have. */
const present = <K extends string>(key: K, value: string | undefined) => (value === undefined ? {} : ({ [key]: value } as Record<K, string>));
