import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import { appError } from '../errors/app-error';
import type { TemplateError } from '../templates/engine';
import { RenderAborted, type RenderResult } from '../templates/render-pool';
import type { TemplateService } from '../templates/service';
import type { TemplateRow } from '../templates/store';
import { targetProblem } from '../templates/target-path';
import { missingRequired, quoteNames } from '../templates/variables';
import { lookupValue, serviceLookups, type Lookup } from './lookups';
import type { VariableValuesT } from './schemas';
import type { SecretVariables } from './secret-variables';
import { type StackStore, type StackDevice, type StackRow, type StackService } from './store';

export interface StackInput {
  name?: string;
  services?: { template_id: string; order?: number; variables?: Record<string, unknown>; api_variables?: Record<string, unknown> }[];
  atomic?: boolean;
  shared?: boolean;
  description?: string;
  variable_config?: Record<string, unknown> | null;
}

/** One rendered service for one device: API.md's render job plus what deployments need. */
export interface ResolvedJob {
  device_id: string;
  device_name: string;
  template_id: string;
  template_name: string;
  service_order: number;
  rendered_config: string;
  target_path: string | null;
  operation: 'replace' | 'merge' | 'delete';
  config_format: 'json' | 'xml' | 'cli';
  /** The values of its secret variables that the rendered config holds (SecretVariables): never shown, masked by the agent. */
  secrets: string[];
  /** Position of the service in the stack's services array. */
  position: number;
  platform: string;
  device: StackDevice;
}

interface Planned {
  position: number;
  service: StackService;
  template: TemplateRow;
  device: StackDevice;
  variables: Record<string, unknown>;
}

const failed = (detail: string) => appError('STACK_RESOLUTION_FAILED', `Stack resolution failed: ${detail}`);

/** Services sorted for pushing: by order, then by position. */
export function pushOrder(services: StackService[]): { service: StackService; position: number }[] {
  return services.map((service, position) => ({ service, position })).sort((a, b) => a.service.order - b.service.order || a.position - b.position);
}

/** Stack rules: CRUD, variable_values resolution, rendering, API-resource lookups. */
export class StacksService {
  constructor(
    readonly store: StackStore,
    private readonly audit: AuditService,
    private readonly templates: TemplateService,
    /** How the stacks, instances and deployments show their secret variables. */
    readonly secrets: SecretVariables,
  ) {}

  /** The stack as stored (to render it). */
  async get(orgId: string, id: string): Promise<StackRow> {
    const stack = await this.store.find(orgId, id);
    if (!stack) throw appError('STACK_NOT_FOUND');
    return stack;
  }

  /** A stack as the API shows it: its services' secret default variables masked. */
  shown(stack: StackRow): StackRow {
    return { ...stack, services: stack.services.map((s) => (s.variables ? { ...s, variables: this.secrets.shown(s.variables) } : s)) };
  }

  async list(orgId: string, limit: number, offset: number): Promise<StackRow[]> {
    return (await this.store.list(orgId, limit, offset)).map((s) => this.shown(s));
  }

  private normalizeServices(services: NonNullable<StackInput['services']>): StackService[] {
    return services.map((s, position) => ({
      template_id: s.template_id,
      order: s.order ?? position,
      ...(s.variables !== undefined ? { variables: s.variables } : {}),
      ...(s.api_variables !== undefined ? { api_variables: s.api_variables } : {}),
    }));
  }

  /** Every service's template must be one of the organization's: 400 rather than a dangling id. */
  private async assertTemplates(orgId: string, services: NonNullable<StackInput['services']>): Promise<void> {
    const ids = [...new Set(services.map((s) => s.template_id))];
    const found = new Set((await this.templates.store.findMany(orgId, ids)).map((t) => t.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      throw appError(
        'UNKNOWN_REFERENCE',
        `No template ${missing.join(', ')} in this organization: services[].template_id must name one of your templates`,
      );
  }

  async create(me: AuthContext, input: StackInput & { name: string; services: NonNullable<StackInput['services']> }): Promise<StackRow> {
    await this.assertTemplates(me.orgId, input.services);
    const stack = await this.store.insert({
      org_id: me.orgId,
      name: input.name.trim(),
      description: input.description ?? '',
      services: this.keptSecrets(this.normalizeServices(input.services), []),
      atomic: input.atomic ?? true,
      shared: input.shared ?? false,
      variable_config: input.variable_config ?? {},
      created_by: me.userId,
      updated_by: me.userId,
    });
    await this.audit.byActor(me, 'stack.created', { stack_id: stack.id, name: stack.name });
    return stack;
  }

  async update(me: AuthContext, id: string, input: StackInput): Promise<StackRow> {
    const fields: Record<string, unknown> = { updated_by: me.userId };
    if (input.name !== undefined) fields.name = input.name.trim();
    if (input.description !== undefined) fields.description = input.description;
    if (input.services !== undefined) {
      await this.assertTemplates(me.orgId, input.services);
      fields.services = this.keptSecrets(this.normalizeServices(input.services), (await this.get(me.orgId, id)).services);
    }
    if (input.atomic !== undefined) fields.atomic = input.atomic;
    if (input.shared !== undefined) fields.shared = input.shared;
    if (input.variable_config !== undefined) fields.variable_config = input.variable_config ?? {};
    const stack = await this.store.update(me.orgId, id, fields);
    if (!stack) throw appError('STACK_NOT_FOUND');
    await this.audit.byActor(me, 'stack.updated', { stack_id: id, fields: Object.keys(input) });
    return stack;
  }

  /** Services whose secret defaults were sent back still masked get the stored values again (SecretVariables.kept). */
  private keptSecrets(services: StackService[], stored: StackService[]): StackService[] {
    const defaults = stored.map((s) => s.variables ?? {});
    return services.map((s, i) => (s.variables ? { ...s, variables: this.secrets.kept(s.variables, defaults, `services.${i}.variables`) } : s));
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    if (!(await this.store.delete(me.orgId, id))) throw appError('STACK_NOT_FOUND');
    await this.audit.byActor(me, 'stack.deleted', { stack_id: id });
  }

  /**
   * Which devices each service runs on. With `targetDevices` (deployments), a service with no
   * entry in variable_values runs on every target, and listed devices must be targets.
   */
  private serviceDevices(stack: StackRow, values: VariableValuesT, targetDevices?: string[]): Map<number, string[]> {
    const count = stack.services.length;
    for (const key of Object.keys(values)) {
      if (!/^\d+$/.test(key) || Number(key) >= count) {
        throw failed(
          `variable_values key '${key}' is not a service position (the stack has ${count} service${count === 1 ? '' : 's'}: ` +
            `0${count > 1 ? `-${count - 1}` : ''})`,
        );
      }
    }
    const targets = targetDevices ? new Set(targetDevices) : null;
    const out = new Map<number, string[]>();
    stack.services.forEach((_, position) => {
      const entry = values[String(position)];
      const devices = entry ? [...new Set(entry.devices ?? [])] : targetDevices ? [...new Set(targetDevices)] : [];
      if (targets) {
        const outside = devices.find((d) => !targets.has(d));
        if (outside) throw failed(`device ${outside} is in variable_values['${position}'].devices but not in target_devices`);
      }
      out.set(position, devices);
    });
    return out;
  }

  /** Works out every (service, device) pair with its merged variables; nothing is rendered yet. */
  private async plan(orgId: string, stack: StackRow, values: VariableValuesT, targetDevices?: string[]): Promise<Planned[]> {
    const devicesOf = this.serviceDevices(stack, values, targetDevices);
    const active = pushOrder(stack.services).filter(({ position }) => devicesOf.get(position)!.length > 0);
    const templates = new Map(
      (await this.templates.store.findMany(orgId, [...new Set(active.map((a) => a.service.template_id))])).map((t) => [t.id, t]),
    );
    for (const { service, position } of active) {
      if (!templates.has(service.template_id)) throw failed(`service ${position} uses template ${service.template_id}, which does not exist`);
    }
    const wanted = [...new Set([...devicesOf.values()].flat().concat(targetDevices ?? []))];
    const devices = await this.store.devices(orgId, wanted);
    const unknown = wanted.filter((id) => !devices.has(id));
    if (unknown.length)
      throw failed(
        `unknown device${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}`,
      );

    const planned: Planned[] = [];
    for (const { service, position } of active) {
      const entry = values[String(position)] ?? {};
      const lookups = serviceLookups(stack.variable_config, service.api_variables);
      for (const deviceId of devicesOf.get(position)!) {
        const device = devices.get(deviceId)!;
        const looked: Record<string, unknown> = {};
        for (const [name, lookup] of lookups) {
          if (typeof lookup === 'string') continue;
          const found = lookupValue(device, lookup);
          if ('value' in found) looked[name] = found.value;
        }
        const variables = { ...service.variables, ...looked, ...entry.shared_vars, ...entry.device_vars?.[deviceId] };
        planned.push({ position, service, template: templates.get(service.template_id)!, device, variables });
      }
    }
    return planned;
  }

  /**
   * Renders the stack for variable_values (API.md rules: defaults < shared_vars < device_vars,
   * with API lookups between the defaults and shared_vars; services with no devices skipped).
   * Throws 400 "Stack resolution failed: …".
   */
  async resolve(orgId: string, stack: StackRow, values: VariableValuesT, targetDevices?: string[]): Promise<ResolvedJob[]> {
    // A mask copied from a record shown masked would be pushed to the devices as the secret.
    this.secrets.refuseMasks(values, 'variable_values');
    const planned = await this.plan(orgId, stack, values, targetDevices);
    refuseMissing(planned);
    refuseWholeConfigTargets(planned);
    let results: RenderResult[];
    const describe = (p: Planned, error: TemplateError) =>
      failed(`template '${p.template.name}' (service ${p.position}) does not render for device ${p.device.name}: ${error.message}`);
    try {
      results = await this.templates.renderMany(
        planned.map((p) => ({ source: p.template.source, variables: p.variables, format: p.template.config_format })),
      );
    } catch (err) {
      if (err instanceof RenderAborted) throw describe(planned[err.index], err.error);
      throw err;
    }
    return planned.map((p, i) => {
      const result = results[i];
      if (!result.ok) throw describe(p, result.error);
      return {
        device_id: p.device.id,
        device_name: p.device.name,
        template_id: p.template.id,
        template_name: p.template.name,
        service_order: p.service.order,
        rendered_config: result.output,
        secrets: this.secrets.values(p.variables).filter((v) => result.output.includes(v)),
        target_path: p.template.target_path,
        operation: p.template.operation,
        config_format: p.template.config_format,
        position: p.position,
        platform: p.template.platform,
        device: p.device,
      };
    });
  }

  /**
   * Fills device_vars with the values of API-mapped variables (service api_variables and
   * variable_config sources), without overriding values already given.
   */
  async resolveVariables(orgId: string, stack: StackRow, values: VariableValuesT) {
    const devicesOf = this.serviceDevices(stack, values);
    const wanted = [...new Set([...devicesOf.values()].flat())];
    const devices = await this.store.devices(orgId, wanted);
    const unknown = wanted.filter((id) => !devices.has(id));
    if (unknown.length) throw failed(`unknown device${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}`);
    const out: VariableValuesT = {};
    const resolved: { service: string; device_id: string; variable: string; source: string; value: unknown }[] = [];
    const unresolved: { service: string; device_id: string | null; variable: string; source: string; reason: string }[] = [];
    stack.services.forEach((service, position) => {
      const key = String(position);
      const entry = values[key];
      const deviceIds = devicesOf.get(position)!;
      if (!entry && deviceIds.length === 0) return;
      const deviceVars: Record<string, Record<string, unknown>> = structuredClone(entry?.device_vars ?? {});
      for (const [name, lookup] of serviceLookups(stack.variable_config, service.api_variables)) {
        if (typeof lookup === 'string') {
          unresolved.push({
            service: key,
            device_id: null,
            variable: name,
            source: describeSpec(service.api_variables?.[name] ?? stack.variable_config[name]),
            reason: lookup,
          });
          continue;
        }
        for (const deviceId of deviceIds) {
          const given = deviceVars[deviceId]?.[name] ?? entry?.shared_vars?.[name];
          if (given !== undefined) continue;
          const found = lookupValue(devices.get(deviceId)!, lookup as Lookup);
          if ('reason' in found) {
            unresolved.push({ service: key, device_id: deviceId, variable: name, source: lookup.text, reason: found.reason });
            continue;
          }
          (deviceVars[deviceId] ??= {})[name] = found.value;
          resolved.push({ service: key, device_id: deviceId, variable: name, source: lookup.text, value: found.value });
        }
      }
      out[key] = { ...entry, devices: deviceIds, device_vars: deviceVars };
    });
    return { variable_values: out, resolved, unresolved };
  }
}

/**
 * Refuses, before anything renders, a service whose structured template would replace or delete
 * the whole config or whole top-level containers (no target_path, or the root): templates are
 * refused in that shape when saved, but one saved before that rule is still in the database.
 */
function refuseWholeConfigTargets(planned: Planned[]): void {
  for (const { template, position } of planned) {
    const problem = targetProblem(template);
    if (!problem) continue;
    throw appError(
      problem.code,
      `Stack resolution failed: template '${template.name}' (service ${position}) has ${problem.detail}. Fix the template with ` +
        `PUT /api/config/templates/${template.id}`,
      { service: String(position), template_id: template.id, template: template.name },
    );
  }
}

/** Refuses, before anything renders, a (service, device) pair that lacks a required variable. */
function refuseMissing(planned: Planned[]): void {
  const missing = planned
    .map((p) => ({
      service: String(p.position),
      template: p.template.name,
      device_id: p.device.id,
      device_name: p.device.name,
      variables: missingRequired(p.template.variables, p.variables),
    }))
    .filter((m) => m.variables.length > 0);
  if (missing.length === 0) return;
  const first = missing[0];
  const more = missing.length > 1 ? ` (and ${missing.length - 1} more service/device pair${missing.length > 2 ? 's' : ''})` : '';
  throw appError(
    'REQUIRED_VARIABLE_MISSING',
    `Stack resolution failed: template '${first.template}' (service ${first.service}) needs required ` +
      `variable${first.variables.length > 1 ? 's' : ''} ${quoteNames(first.variables)} for device ${first.device_name}; give ` +
      `${first.variables.length > 1 ? 'them' : 'it'} in variable_values['${first.service}'] shared_vars or device_vars, or as the service's default${more}`,
    { missing: missing.slice(0, 100) },
  );
}

function describeSpec(spec: unknown): string {
  return typeof spec === 'string' ? spec : JSON.stringify(spec ?? null);
}
