import { isIP } from 'node:net';
import type { Static } from '@sinclair/typebox';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import { isForeignKeyViolation, uniqueOr } from '../devices/db-errors';
import { plural } from '../../../shared/src/words';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import type { ProfileBody, ProfileChanges } from './schemas';
import { literalOutside, NetworkSyntaxError, normalizeNetworks } from '../../../shared/src/device/networks';
import { checkedCaCertificate } from './ca-certificate';
import type { NetworkLimit, ProfileStore } from './store';

const SECRETS = ['password', 'private_key', 'enable_password'] as const;

/**
 * Why a device with this host may not use a profile with this limit, or null. Only an IP-address
 * host is judged: a DNS name is the agent's to check, on the addresses it resolves to.
 */
export function hostRefusal(host: string, limit: NetworkLimit | undefined, device: string): string | null {
  if (!limit || !literalOutside(host, limit.allowed_networks)) return null;
  return (
    `Device '${device}': host ${host} is outside the networks connection profile '${limit.profile}' allows its credentials to be sent to ` +
    `(allowed_networks: ${limit.allowed_networks.join(', ')})`
  );
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set([...a, ...b]).size === a.length;

/** Connection profile rules: secrets sealed on write, never read back here. */
export class ProfileService {
  constructor(
    private readonly store: ProfileStore,
    private readonly secrets: SecretBox,
    private readonly audit: AuditService,
  ) {}

  /** The organization's connection profiles (credentials never included). */
  list(orgId: string) {
    return this.store.list(orgId);
  }

  async get(orgId: string, id: string) {
    const profile = await this.store.find(orgId, id);
    if (!profile) throw appError('PROFILE_NOT_FOUND');
    return profile;
  }

  /** Body fields → columns; a secret sent as null is cleared, an omitted one is left alone. */
  private async columns(body: Static<typeof ProfileChanges>): Promise<Record<string, unknown>> {
    const row: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (value === undefined || key === 'allowed_networks') continue; // see networks()
      if ((SECRETS as readonly string[]).includes(key)) row[`${key}_enc`] = await this.secrets.sealOptional(value as string | null);
      else if (key === 'ca_certificate') row[key] = value === null ? null : checkedCaCertificate(value as string);
      else row[key] = key === 'name' ? (value as string).trim() : value;
    }
    return row;
  }

  /**
   * allowed_networks, normalized, when the body sets it. It decides where the profile's credentials
   * may be sent, so setting or changing it needs configs.secrets (an organization administrator):
   * an operator can neither widen nor lift the limit. Sending the networks the profile already has
   * (in any order or spelling) changes nothing and needs nothing.
   */
  private networks(me: AuthContext, body: Static<typeof ProfileChanges>, current: readonly string[] = []): string[] | undefined {
    if (body.allowed_networks === undefined) return undefined;
    let networks: string[];
    try {
      networks = normalizeNetworks(body.allowed_networks);
    } catch (err) {
      if (err instanceof NetworkSyntaxError) throw appError('PROFILE_INVALID_NETWORK', `allowed_networks: ${err.message}`);
      throw err;
    }
    if (sameSet(networks, current)) return [...current]; // as stored, order included
    if (!me.permissions.includes('configs.secrets')) {
      throw appError(
        'FORBIDDEN',
        "Insufficient permissions: setting a connection profile's allowed_networks needs the configs.secrets permission (an organization administrator)",
      );
    }
    return networks;
  }

  /**
   * Loosening how an existing profile's credentials are protected on the way to its devices (gNMI
   * TLS off, its certificate check off, another CA trusted) would let whoever sits on the path read
   * them, so it needs configs.secrets like the networks they may go to. Tightening needs nothing.
   */
  private assertMayLoosen(me: AuthContext, body: Static<typeof ProfileChanges>, current: Awaited<ReturnType<ProfileService['get']>>): void {
    const loosens =
      (body.gnmi_tls === false && current.gnmi_tls) ||
      (body.gnmi_skip_verify === true && !current.gnmi_skip_verify) ||
      (body.ca_certificate !== undefined && body.ca_certificate !== null && body.ca_certificate !== current.ca_certificate);
    if (loosens && !me.permissions.includes('configs.secrets')) {
      throw appError(
        'FORBIDDEN',
        "Insufficient permissions: turning off a connection profile's gNMI TLS or its certificate check, or trusting another CA, needs " +
          'the configs.secrets permission (an organization administrator)',
      );
    }
  }

  /** HOST_OUTSIDE_PROFILE_NETWORKS for a new device whose IP-address host is outside its profile's networks. */
  async assertHostAllowed(orgId: string, profileId: string, host: string, device: string): Promise<void> {
    if (isIP(host.split('%')[0]) === 0) return; // a name: the agent checks it
    const refusal = hostRefusal(host, await this.store.limitOf(orgId, profileId), device);
    if (refusal) throw appError('HOST_OUTSIDE_PROFILE_NETWORKS', refusal);
  }

  /**
   * The same for existing devices among ids (of the organization), given the profile they are
   * moving to and the host they are getting (each when it changes): one refusal names the first
   * device refused and how many more there are; nothing is written.
   */
  async assertDevicesAllowed(orgId: string, ids: string[], change: { profileId?: string; host?: string }): Promise<void> {
    if (ids.length === 0 || (change.host !== undefined && isIP(change.host.split('%')[0]) === 0)) return;
    const refused = (await this.store.limitedDevices(orgId, ids, change)).flatMap((d) => hostRefusal(d.host, d, d.name) ?? []);
    if (refused.length === 0) return;
    const more = refused.length > 1 ? `; and ${plural(refused.length - 1, 'more device')} outside it` : '';
    throw appError('HOST_OUTSIDE_PROFILE_NETWORKS', `${refused[0]}${more}`, { devices_refused: refused.length });
  }

  /** For an import into one profile: each row's refusal (null: the row may use the profile). */
  async hostCheck(orgId: string, profileId: string): Promise<(host: string, device: string) => string | null> {
    const limit = await this.store.limitOf(orgId, profileId);
    return (host, device) => hostRefusal(host, limit, device);
  }

  /** Audit details name the fields changed, never their values (secrets among them); allowed_networks, no secret, is recorded as set. */
  private record(me: AuthContext, kind: string, id: string, details: Record<string, unknown> = {}) {
    return this.audit.byActor(me, kind, { profile_id: id, ...details });
  }

  async create(me: AuthContext, body: Static<typeof ProfileBody>) {
    const allowed_networks = this.networks(me, body);
    const id = await this.store.insert({ ...(await this.columns(body)), ...(allowed_networks && { allowed_networks }), org_id: me.orgId });
    if (!id) throw appError('PROFILE_NAME_TAKEN');
    await this.record(me, 'profile.created', id, { name: body.name, ...(allowed_networks && allowed_networks.length > 0 && { allowed_networks }) });
    return this.get(me.orgId, id);
  }

  async update(me: AuthContext, id: string, body: Static<typeof ProfileChanges>) {
    const current = await this.get(me.orgId, id);
    this.assertMayLoosen(me, body, current);
    const allowed_networks = body.allowed_networks === undefined ? undefined : this.networks(me, body, current.allowed_networks);
    const row = { ...(await this.columns(body)), ...(allowed_networks && { allowed_networks }) };
    const changed = await uniqueOr(
      () => this.store.update(me.orgId, id, row),
      () => appError('PROFILE_NAME_TAKEN'),
    );
    if (changed === 0) throw appError('PROFILE_NOT_FOUND');
    await this.record(me, 'profile.updated', id, { fields: Object.keys(body), ...(allowed_networks && { allowed_networks }) });
    return this.get(me.orgId, id);
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    const refuse = (count: number) =>
      appError(
        'PROFILE_IN_USE',
        `Connection profile is used by ${plural(count, 'device')}; move them to another profile with POST /api/profiles/assign first`,
        { device_count: count },
      );
    const inUse = await this.store.deviceCount(me.orgId, id);
    if (inUse > 0) throw refuse(inUse);
    let deleted: number;
    try {
      deleted = await this.store.delete(me.orgId, id);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw refuse(await this.store.deviceCount(me.orgId, id));
      throw err;
    }
    if (deleted === 0) throw appError('PROFILE_NOT_FOUND');
    await this.record(me, 'profile.deleted', id);
  }

  async assign(me: AuthContext, profileId: string, deviceIds: string[]): Promise<number> {
    if (!(await this.store.exists(me.orgId, profileId))) throw appError('PROFILE_NOT_FOUND');
    await this.assertDevicesAllowed(me.orgId, deviceIds, { profileId });
    const updated = await this.store.assign(me.orgId, profileId, deviceIds, me.userId);
    await this.record(me, 'profile.assigned', profileId, { devices: updated });
    return updated;
  }
}
