import type { AuditService } from '../platform/audit-service';
import { appError } from '../errors/app-error';
import { isReservedUsername, reservedSignInMessage } from './reserved-usernames';
import type { EnterpriseStore, ExternalUserFields, ExternalUserRow } from './ldap-oidc-store';

/**
 * Users behind LDAP and OIDC sign-ins (API.md rule 5): the first sign-in creates the user in the
 * default organization with no roles; later ones find it again. LDAP users are found by username
 * (the directory owns the name), OIDC users by issuer + subject (names at a provider can change).
 * A sign-in never takes over an account of another kind or identity: that is a 409.
 */
export class ExternalUsers {
  constructor(
    private readonly store: EnterpriseStore,
    private readonly audit: AuditService,
  ) {}

  async resolve(fields: ExternalUserFields, ip: string): Promise<ExternalUserRow> {
    // Twice: a concurrent first sign-in of the same person may create the row between our look and insert.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const known = fields.provider === 'oidc' ? await this.store.findByExternalId('oidc', fields.externalId) : undefined;
      const user = known ?? (await this.store.findByUsername(fields.username));
      if (user) {
        const sameIdentity = user.auth_provider === fields.provider && (fields.provider === 'ldap' || user.external_id === fields.externalId);
        if (!sameIdentity)
          throw conflict(
            fields.username,
            user.auth_provider === fields.provider ? `another ${label(user.auth_provider)} identity` : `a ${label(user.auth_provider)} account`,
          );
        return this.store.refreshProfile(user, fields);
      }
      // Never provisioned under a system account's name (an SSH certificate's principal is the username).
      if (isReservedUsername(fields.username)) {
        await this.audit.record({
          kind: 'auth.provisioning_refused',
          username: fields.username,
          ip,
          details: { provider: fields.provider, external_id: fields.externalId, reason: 'reserved username' },
        });
        throw appError('RESERVED_USERNAME', reservedSignInMessage(fields.username, label(fields.provider)));
      }
      const created = await this.store.insertInDefaultOrg(fields);
      if (created) {
        await this.audit.record({
          kind: 'auth.user_provisioned',
          orgId: created.home_org_id,
          userId: created.id,
          username: created.username,
          ip,
          details: { provider: fields.provider, external_id: fields.externalId },
        });
        return created;
      }
    }
    throw conflict(fields.username, 'another account');
  }
}

function label(provider: string): string {
  return provider === 'local' ? 'local' : provider.toUpperCase();
}

function conflict(username: string, owner: string): Error {
  return appError(
    'EXTERNAL_USERNAME_CONFLICT',
    `The username '${username}' already belongs to ${owner}; an administrator must rename or remove that account first`,
  );
}
