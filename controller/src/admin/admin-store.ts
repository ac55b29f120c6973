import type { Db } from '../db/knex';

const ORG_COLUMNS = ['id', 'name', 'is_default', 'created_at', 'updated_at'];
const USER_COLUMNS = [
  'id',
  'home_org_id',
  'username',
  'email',
  'display_name',
  'auth_provider',
  'roles',
  'is_active',
  'is_platform_admin',
  'created_at',
  'updated_at',
];

/** An organization as the store returns it. */
export interface OrganizationRow {
  id: string;
  name: string;
  is_default: boolean;
  created_at: Date;
  updated_at: Date;
}

/** SQL for organizations and user administration. */
export class AdminStore {
  private readonly createdListeners = new Set<(org: OrganizationRow) => void>();

  constructor(private readonly db: Db) {}

  /**
   * Calls `listener` with each organization this process creates, once its row is committed (the
   * built-in agents start its agent at once rather than at their next poll). Returns the undo.
   */
  onOrganizationCreated(listener: (org: OrganizationRow) => void): () => void {
    this.createdListeners.add(listener);
    return () => this.createdListeners.delete(listener);
  }

  listOrganizations() {
    return this.db('organizations').orderBy('name').select(ORG_COLUMNS);
  }

  async createOrganization(name: string): Promise<OrganizationRow | undefined> {
    const [row] = (await this.db('organizations').insert({ name }).onConflict('name').ignore().returning(ORG_COLUMNS)) as OrganizationRow[];
    if (row) for (const listener of this.createdListeners) listener(row);
    return row;
  }

  /** Undefined when no organization has the id; null when another one already has the name. */
  async renameOrganization(id: string, name: string) {
    try {
      const [row] = await this.db('organizations').where({ id }).update({ name, updated_at: this.db.fn.now() }).returning(ORG_COLUMNS);
      return row;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return null; // the unique name index
      throw err;
    }
  }

  async listUsers(orgId: string, limit: number, offset: number) {
    const base = this.db('users').where({ home_org_id: orgId });
    const [{ count }] = await base.clone().count<{ count: number }[]>({ count: '*' });
    const users = await base.select(USER_COLUMNS).orderBy('username').limit(limit).offset(offset);
    return { users, total: Number(count) };
  }

  findUser(orgId: string, id: string) {
    return this.db('users').where({ id, home_org_id: orgId }).first(USER_COLUMNS);
  }

  async insertUser(row: Record<string, unknown>) {
    const [user] = await this.db('users').insert(row).onConflict(this.db.raw('(lower(username))')).ignore().returning(USER_COLUMNS);
    return user;
  }

  async updateUser(orgId: string, id: string, fields: Record<string, unknown>) {
    const [user] = await this.db('users')
      .where({ id, home_org_id: orgId })
      .update({ ...fields, updated_at: this.db.fn.now() })
      .returning(USER_COLUMNS);
    return user;
  }
}
