import type { Static } from '@sinclair/typebox';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import { isForeignKeyViolation, uniqueOr } from '../devices/db-errors';
import { plural } from '../../../shared/src/words';
import type { SecretBox } from '../../../shared/src/crypto/secret-box';
import type { ProfileBody, ProfileChanges } from './schemas';
import { checkedCaCertificate } from './ca-certificate';
import type { ProfileStore } from './store';

const SECRETS = ['password', 'private_key', 'enable_password'] as const;

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
      if (value === undefined) continue;
      if ((SECRETS as readonly string[]).includes(key)) row[`${key}_enc`] = await this.secrets.sealOptional(value as string | null);
      else if (key === 'ca_certificate') row[key] = value === null ? null : checkedCaCertificate(value as string);
      else row[key] = key === 'name' ? (value as string).trim() : value;
    }
    return row;
  }

  /** Audit details name the fields changed, never their values (secrets among them). */
  private record(me: AuthContext, kind: string, id: string, details: Record<string, unknown> = {}) {
    return this.audit.record({ kind, orgId: me.orgId, userId: me.userId, username: me.username, details: { profile_id: id, ...details } });
  }

  async create(me: AuthContext, body: Static<typeof ProfileBody>) {
    const id = await this.store.insert({ ...(await this.columns(body)), org_id: me.orgId });
    if (!id) throw appError('PROFILE_NAME_TAKEN');
    await this.record(me, 'profile.created', id, { name: body.name });
    return this.get(me.orgId, id);
  }

  async update(me: AuthContext, id: string, body: Static<typeof ProfileChanges>) {
    const row = await this.columns(body);
    const changed = await uniqueOr(
      () => this.store.update(me.orgId, id, row),
      () => appError('PROFILE_NAME_TAKEN'),
    );
    if (changed === 0) throw appError('PROFILE_NOT_FOUND');
    await this.record(me, 'profile.updated', id, { fields: Object.keys(body) });
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
    const updated = await this.store.assign(me.orgId, profileId, deviceIds, me.userId);
    await this.record(me, 'profile.assigned', profileId, { devices: updated });
    return updated;
  }
}
