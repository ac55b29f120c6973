import type { Static } from '@sinclair/typebox';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { isForeignKeyViolation, uniqueOr } from '../devices/db-errors';
import { plural } from '../../../shared/src/words';
import { appError } from '../errors/app-error';
import type { SiteBody, SiteChanges } from './schemas';
import type { SiteStore } from './store';

/** Site rules: nesting stays inside one organization and never forms a cycle. */
export class SiteService {
  constructor(
    private readonly store: SiteStore,
    private readonly audit: AuditService,
  ) {}

  /** The organization's sites. */
  list(orgId: string) {
    return this.store.list(orgId);
  }

  async get(orgId: string, id: string) {
    const site = await this.store.find(orgId, id);
    if (!site) throw appError('SITE_NOT_FOUND');
    return site;
  }

  private async checkParent(orgId: string, siteId: string | null, parentId: string | null | undefined): Promise<void> {
    if (!parentId) return;
    if (!(await this.store.exists(orgId, parentId))) {
      throw appError('SITE_INVALID_PARENT', 'parent_site_id is not a site of your organization');
    }
    if (siteId && (await this.store.chainIncludes(parentId, siteId))) {
      throw appError('SITE_INVALID_PARENT', 'parent_site_id would make the site its own ancestor (a cycle)');
    }
  }

  private trimmed<T extends Static<typeof SiteChanges>>(body: T): T {
    return body.name === undefined ? body : { ...body, name: body.name.trim() };
  }

  private record(me: AuthContext, kind: string, id: string, details: Record<string, unknown> = {}) {
    return this.audit.byActor(me, kind, { site_id: id, ...details });
  }

  async create(me: AuthContext, body: Static<typeof SiteBody>) {
    await this.checkParent(me.orgId, null, body.parent_site_id);
    const id = await this.store.insert({ ...this.trimmed(body), org_id: me.orgId });
    if (!id) throw appError('SITE_NAME_TAKEN');
    await this.record(me, 'site.created', id, { name: body.name });
    return this.get(me.orgId, id);
  }

  async update(me: AuthContext, id: string, body: Static<typeof SiteChanges>) {
    await this.get(me.orgId, id);
    await this.checkParent(me.orgId, id, body.parent_site_id);
    if (Object.keys(body).length > 0) {
      await uniqueOr(
        () => this.store.update(me.orgId, id, this.trimmed(body)),
        () => appError('SITE_NAME_TAKEN'),
      );
      await this.record(me, 'site.updated', id, { fields: Object.keys(body) });
    }
    return this.get(me.orgId, id);
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    const site = await this.get(me.orgId, id);
    const refuse = (devices: number, children: number, other = '') => {
      const parts = [devices > 0 ? plural(devices, 'device') : '', children > 0 ? plural(children, 'child site') : '', other].filter(Boolean);
      return appError('SITE_IN_USE', `Site still has ${parts.join(' and ')}; move or delete them first`, {
        device_count: devices,
        child_count: children,
      });
    };
    if (site.device_count > 0 || site.child_count > 0) throw refuse(site.device_count, site.child_count);
    try {
      await this.store.delete(me.orgId, id);
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      const now = await this.get(me.orgId, id);
      throw refuse(
        now.device_count,
        now.child_count,
        now.device_count + now.child_count === 0 ? 'records of other areas (such as agents) that use it' : '',
      );
    }
    await this.record(me, 'site.deleted', id, { name: site.name });
  }
}
