import { hashPassword, passwordProblem } from '../auth/passwords';
import { own } from '../../../shared/src/own';
import type { AuthContext } from '../auth/auth-service';
import { ROLES } from '../auth/permissions';
import { isReservedUsername, reservedUsernameMessage } from '../auth/reserved-usernames';
import type { AuthStore } from '../auth/auth-store';
import { appError } from '../errors/app-error';
import type { AuditService } from '../platform/audit-service';
import { type AdminStore } from './admin-store';

export interface NewUser {
  username: string;
  password: string;
  email?: string;
  display_name?: string;
  roles?: string[];
}

export interface UserChanges {
  email?: string;
  display_name?: string;
  is_active?: boolean;
  password?: string;
}

/** Users of the caller's active organization: create, edit, disable, assign roles. */
export class UsersService {
  constructor(
    readonly store: AdminStore,
    private readonly authStore: AuthStore,
    private readonly audit: AuditService,
  ) {}

  private checkRoles(roles: string[], actor: AuthContext): void {
    const unknown = roles.filter((role) => !own(ROLES, role));
    if (unknown.length) throw appError('UNKNOWN_ROLE', `Unknown role(s): ${unknown.join(', ')}; built-in roles are ${Object.keys(ROLES).join(', ')}`);
    if (roles.includes('platform_admin') && !actor.isPlatformAdmin) {
      throw appError('FORBIDDEN', 'Only a platform administrator can grant platform_admin');
    }
  }

  async create(actor: AuthContext, input: NewUser) {
    if (isReservedUsername(input.username)) throw appError('RESERVED_USERNAME', reservedUsernameMessage(input.username));
    const roles = input.roles ?? [];
    this.checkRoles(roles, actor);
    const problem = passwordProblem(input.password, input.username);
    if (problem) throw appError('WEAK_PASSWORD', problem.replace('New password', 'Password'));
    const user = await this.store.insertUser({
      home_org_id: actor.orgId,
      username: input.username,
      email: input.email ?? '',
      display_name: input.display_name ?? '',
      password_hash: await hashPassword(input.password),
      roles,
      is_platform_admin: roles.includes('platform_admin'),
    });
    if (!user) throw appError('USERNAME_TAKEN');
    await this.audit.byActor(actor, 'admin.user_created', { user_id: user.id, username: input.username, roles });
    return user;
  }

  /** The user to change, in the actor's organization; platform administrators are off limits to others. */
  private async changeable(actor: AuthContext, id: string): Promise<void> {
    const target = await this.store.findUser(actor.orgId, id);
    if (!target) throw appError('USER_NOT_FOUND');
    if (target.is_platform_admin && !actor.isPlatformAdmin) {
      throw appError('FORBIDDEN', 'Only a platform administrator can change a platform administrator');
    }
  }

  async update(actor: AuthContext, id: string, changes: UserChanges) {
    if (id === actor.userId && changes.is_active === false) throw appError('CANNOT_DISABLE_SELF');
    await this.changeable(actor, id);
    const fields: Record<string, unknown> = { ...changes };
    if (changes.password !== undefined) {
      const problem = passwordProblem(changes.password);
      if (problem) throw appError('WEAK_PASSWORD', problem.replace('New password', 'Password'));
      fields.password_hash = await hashPassword(changes.password);
      delete fields.password;
    }
    const user = await this.store.updateUser(actor.orgId, id, fields);
    if (!user) throw appError('USER_NOT_FOUND');
    // Disabling or resetting a password ends the user's sessions at once.
    // (An administrator resetting their own password keeps the session they are using.)
    if (changes.is_active === false || changes.password !== undefined) {
      await this.authStore.revokeUserSessions(id, 'changed by administrator', id === actor.userId ? actor.sessionId : undefined);
    }
    await this.audit.byActor(actor, 'admin.user_updated', { user_id: id, fields: Object.keys(changes) });
    return user;
  }

  async assignRoles(actor: AuthContext, id: string, roles: string[]) {
    this.checkRoles(roles, actor);
    if (id === actor.userId) throw appError('CANNOT_DISABLE_SELF', 'You cannot change your own roles; ask another administrator');
    await this.changeable(actor, id);
    const user = await this.store.updateUser(actor.orgId, id, { roles, is_platform_admin: roles.includes('platform_admin') });
    if (!user) throw appError('USER_NOT_FOUND');
    // Permissions follow the roles on the next request; open live streams are checked again now.
    await this.authStore.announceAccessChange([id]);
    await this.audit.byActor(actor, 'admin.roles_assigned', { user_id: id, roles });
    return user;
  }
}
