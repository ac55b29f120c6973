import type { Db } from '../db/knex';
import type { UserRow } from './auth-store';

export type ExternalProvider = 'ldap' | 'oidc';

export interface ExternalUserFields {
  provider: ExternalProvider;
  username: string;
  externalId: string;
  email: string;
  displayName: string;
}

export type ExternalUserRow = UserRow & { external_id: string | null };

export interface OidcRequestRow {
  state_hash: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  expires_at: Date;
}

/** SQL for enterprise sign-in: users from LDAP and OIDC, and pending OIDC authorization requests. */
export class EnterpriseStore {
  constructor(private readonly db: Db) {}

  findByExternalId(provider: ExternalProvider, externalId: string): Promise<ExternalUserRow | undefined> {
    return this.db('users').where({ auth_provider: provider, external_id: externalId }).first();
  }

  findByUsername(username: string): Promise<ExternalUserRow | undefined> {
    return this.db('users').whereRaw('lower(username) = lower(?)', [username]).first();
  }

  /**
   * Creates a role-less user in the default organization. Undefined when the username or the
   * provider identity was taken meanwhile (a concurrent first sign-in); the caller looks again.
   */
  async insertInDefaultOrg(fields: ExternalUserFields): Promise<ExternalUserRow | undefined> {
    const org = await this.db('organizations').where({ is_default: true }).first('id');
    if (!org) throw new Error('no default organization: the controller bootstrap did not run');
    const rows: ExternalUserRow[] = await this.db('users')
      .insert({
        home_org_id: org.id,
        username: fields.username,
        email: fields.email,
        display_name: fields.displayName,
        password_hash: null,
        auth_provider: fields.provider,
        external_id: fields.externalId,
        roles: [],
        is_platform_admin: false,
      })
      .onConflict()
      .ignore()
      .returning('*');
    return rows[0];
  }

  /** Keeps e-mail, display name and provider identity in step with the directory or provider. */
  async refreshProfile(user: ExternalUserRow, fields: ExternalUserFields): Promise<ExternalUserRow> {
    const changes: Record<string, string> = {};
    if (fields.email && fields.email !== user.email) changes.email = fields.email;
    if (fields.displayName && fields.displayName !== user.display_name) changes.display_name = fields.displayName;
    if (fields.externalId !== user.external_id) changes.external_id = fields.externalId;
    if (Object.keys(changes).length === 0) return user;
    const [row] = await this.db('users')
      .where({ id: user.id })
      .update({ ...changes, updated_at: this.db.fn.now() })
      .returning('*');
    return row;
  }

  /** Stores a pending authorization request and drops expired ones. */
  async saveOidcRequest(row: OidcRequestRow): Promise<void> {
    await this.db('oidc_auth_requests').where('expires_at', '<', new Date()).delete();
    await this.db('oidc_auth_requests').insert(row);
  }

  /** Takes a pending request out (single use); undefined when unknown, used or expired. */
  async takeOidcRequest(stateHash: string): Promise<OidcRequestRow | undefined> {
    const rows: OidcRequestRow[] = await this.db('oidc_auth_requests').where({ state_hash: stateHash }).delete().returning('*');
    const row = rows[0];
    return row && new Date(row.expires_at).getTime() > Date.now() ? row : undefined;
  }
}
