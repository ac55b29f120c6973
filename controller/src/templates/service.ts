import type { Knex } from 'knex';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import { PlatformStore } from '../platforms/store';
import { TemplateError } from './engine';
import { type RenderPool, type RenderRequest, type RenderResult } from './render-pool';
import { type TemplateStore, type TemplateRow } from './store';
import { targetProblem, type PushShape } from './target-path';
import { missingRequired, quoteNames, type TemplateVariable } from './variables';

/**
 * Which template formats each transport takes: gNMI JSON, NETCONF XML. cli templates are allowed on
 * any platform (a CLI snippet labelled by target_path); deployments type them over SSH CLI in the
 * device's dialect, whatever transport the platform names.
 */
const FORMATS_BY_TRANSPORT: Record<string, string[]> = { netconf: ['xml', 'cli'], gnmi: ['json', 'cli'] };

export interface TemplateInput {
  name?: string;
  platform?: string;
  config_format?: 'json' | 'xml' | 'cli';
  source?: string;
  operation?: 'replace' | 'merge' | 'delete' | null;
  target_path?: string | null;
  description?: string;
}

export function renderError(error: TemplateError) {
  return appError('RENDER_ERROR', `Render error: ${error.message}`, { line: error.line, column: error.column });
}

/** A structured replace or delete must name its subtree (./target-path.ts): refused when saved. */
function refuseWholeConfigTarget(shape: PushShape): void {
  const problem = targetProblem(shape);
  if (problem) throw appError(problem.code, `Refused: the template has ${problem.detail}`);
}

/** Template rules: platform and format checks, variables from the syntax tree, versions, render. */
export class TemplateService {
  constructor(
    readonly store: TemplateStore,
    private readonly platforms: PlatformStore,
    private readonly audit: AuditService,
    readonly renderer: RenderPool,
  ) {}

  /** A source's syntax error (with its line and column) or its variables; nothing is stored. */
  async validate(source: string) {
    const { variables, error } = await this.renderer.analyze(source);
    return { valid: error === null, error: error && { message: error.detail, line: error.line, column: error.column }, variables };
  }

  async get(orgId: string, id: string): Promise<TemplateRow> {
    const template = await this.store.find(orgId, id);
    if (!template) throw appError('TEMPLATE_NOT_FOUND');
    return template;
  }

  /** `q`: the caller's transaction when there is one (embedded PGlite has a single connection). */
  private async checkPlatform(platformName: string, format: string, q?: Knex.Transaction): Promise<void> {
    const platform = await (q ? new PlatformStore(q) : this.platforms).findByName(platformName);
    if (!platform) throw appError('UNKNOWN_PLATFORM', `Unknown platform '${platformName}'; GET /api/config/platforms lists the platforms`);
    const allowed = FORMATS_BY_TRANSPORT[platform.transport] ?? [];
    if (!allowed.includes(format)) {
      throw appError(
        'TEMPLATE_FORMAT_MISMATCH',
        `Platform ${platform.name} uses ${platform.transport}, which takes ${allowed.join(' or ')} templates, not ${format}`,
      );
    }
  }

  async create(
    me: AuthContext,
    input: Required<Pick<TemplateInput, 'name' | 'platform' | 'config_format' | 'source'>> & TemplateInput,
  ): Promise<TemplateRow> {
    await this.checkPlatform(input.platform, input.config_format);
    refuseWholeConfigTarget({ config_format: input.config_format, operation: input.operation ?? 'replace', target_path: input.target_path ?? null });
    // Drafts that do not parse are kept (variables empty); rendering reports the error and its line.
    const { variables } = await this.renderer.analyze(input.source);
    const template = await this.store.insert(
      {
        org_id: me.orgId,
        name: input.name.trim(),
        description: input.description ?? '',
        platform: input.platform,
        config_format: input.config_format,
        source: input.source,
        operation: input.operation ?? 'replace',
        target_path: input.target_path ?? null,
        variables,
        created_by: me.userId,
        updated_by: me.userId,
      },
      me.username,
    );
    await this.audit.byActor(me, 'template.created', { template_id: template.id, name: template.name });
    return template;
  }

  async update(me: AuthContext, id: string, input: TemplateInput): Promise<TemplateRow> {
    // Checked before the transaction opens (it runs in a worker and can take a while); used only when the source changed.
    const analysis = input.source !== undefined ? await this.renderer.analyze(input.source) : null;
    const updated = await this.store.update(
      me.orgId,
      id,
      async (current, trx) => {
        const fields: Record<string, unknown> = { updated_by: me.userId };
        if (input.name !== undefined) fields.name = input.name.trim();
        if (input.description !== undefined) fields.description = input.description;
        if (input.operation !== undefined) fields.operation = input.operation ?? 'replace';
        if (input.target_path !== undefined) fields.target_path = input.target_path;
        if (input.platform !== undefined) fields.platform = input.platform;
        if (input.config_format !== undefined) fields.config_format = input.config_format;
        if (input.platform !== undefined || input.config_format !== undefined) {
          await this.checkPlatform(input.platform ?? current.platform, input.config_format ?? current.config_format, trx);
        }
        // The template as it would be saved; a template saved before the rule is refused until it names its subtree.
        refuseWholeConfigTarget({ ...current, ...(fields as Partial<PushShape>) });
        const newSource = input.source !== undefined && input.source !== current.source;
        if (newSource) {
          fields.source = input.source;
          fields.variables = analysis!.variables;
        }
        return { fields, newSource };
      },
      me.username,
    );
    if (!updated) throw appError('TEMPLATE_NOT_FOUND');
    await this.audit.byActor(me, 'template.updated', { template_id: id, fields: Object.keys(input), version: updated.current_version });
    return updated;
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    if (!(await this.store.delete(me.orgId, id))) throw appError('TEMPLATE_NOT_FOUND');
    await this.audit.byActor(me, 'template.deleted', { template_id: id });
  }

  async versions(orgId: string, id: string) {
    await this.get(orgId, id);
    return this.store.listVersions(id);
  }

  async version(orgId: string, id: string, version: number) {
    await this.get(orgId, id);
    const found = await this.store.findVersion(id, version);
    if (!found) throw appError('TEMPLATE_VERSION_NOT_FOUND', `Template version ${version} not found`);
    return found;
  }

  /** Renders the current source, or an older version; nothing is sent to devices. */
  async render(orgId: string, id: string, variables: Record<string, unknown>, version?: number): Promise<{ rendered: string; format: string }> {
    const template = await this.get(orgId, id);
    let { source, variables: declared } = template as { source: string; variables: TemplateVariable[] };
    if (version !== undefined && version !== template.current_version) ({ source, variables: declared } = await this.version(orgId, id, version));
    const missing = missingRequired(declared ?? [], variables);
    if (missing.length) {
      throw appError(
        'REQUIRED_VARIABLE_MISSING',
        `Render error: required variable${missing.length > 1 ? 's' : ''} ${quoteNames(missing)} not provided`,
        { missing },
      );
    }
    try {
      return { rendered: await this.renderer.render(source, variables, template.config_format), format: template.config_format };
    } catch (err) {
      if (err instanceof TemplateError) throw renderError(err);
      throw err;
    }
  }

  renderMany(requests: RenderRequest[]): Promise<RenderResult[]> {
    return this.renderer.renderMany(requests);
  }
}
