import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import type { DeploymentService, RunOptions } from '../deployments/service';
import type { DeploymentRow } from '../deployments/store';
import { appError } from '../errors/app-error';
import type { VariableValuesT } from '../stacks/schemas';
import type { StacksService } from '../stacks/service';
import { type InstanceStore, type InstanceRow } from './store';

export interface InstanceInput {
  stack_id?: string;
  name?: string;
  target_devices?: { device_id: string }[];
  variable_values?: VariableValuesT;
  description?: string;
}

/** Instances: saved deployments that can be deployed again or on a schedule. */
export class InstanceService {
  constructor(
    readonly store: InstanceStore,
    private readonly stacks: StacksService,
    private readonly deployments: DeploymentService,
    private readonly audit: AuditService,
  ) {}

  /** The instance as stored (to deploy it). */
  async get(orgId: string, id: string): Promise<InstanceRow> {
    const instance = await this.store.find(orgId, id);
    if (!instance) throw appError('INSTANCE_NOT_FOUND');
    return instance;
  }

  /** An instance as the API shows it: its secret variables masked. */
  shown(instance: InstanceRow): InstanceRow {
    return { ...instance, variable_values: this.stacks.secrets.shown(instance.variable_values) };
  }

  async list(orgId: string, limit: number, offset: number): Promise<InstanceRow[]> {
    return (await this.store.list(orgId, limit, offset)).map((i) => this.shown(i));
  }

  /** The stack and devices must be the organization's; rendering waits for the deploy. */
  private async check(orgId: string, input: InstanceInput): Promise<void> {
    if (input.stack_id && !(await this.stacks.store.find(orgId, input.stack_id))) {
      throw appError('STACK_RESOLUTION_FAILED', `Stack resolution failed: stack ${input.stack_id} not found`);
    }
    if (input.target_devices) {
      const ids = [...new Set(input.target_devices.map((t) => t.device_id))];
      const found = await this.store.existingDevices(orgId, ids);
      const unknown = ids.filter((id) => !found.has(id));
      if (unknown.length)
        throw appError(
          'STACK_RESOLUTION_FAILED',
          `Stack resolution failed: unknown device${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}`,
        );
    }
  }

  async create(me: AuthContext, input: Required<Pick<InstanceInput, 'stack_id' | 'name' | 'target_devices'>> & InstanceInput): Promise<InstanceRow> {
    await this.check(me.orgId, input);
    this.stacks.secrets.refuseMasks(input.variable_values, 'variable_values');
    const instance = await this.store.insert({
      org_id: me.orgId,
      stack_id: input.stack_id,
      name: input.name.trim(),
      description: input.description ?? '',
      target_devices: input.target_devices.map((t) => ({ device_id: t.device_id })),
      variable_values: input.variable_values ?? {},
      created_by: me.userId,
    });
    await this.audit.byActor(me, 'instance.created', { instance_id: instance.id, stack_id: instance.stack_id });
    return instance;
  }

  async update(me: AuthContext, id: string, input: InstanceInput): Promise<InstanceRow> {
    const stored = await this.get(me.orgId, id);
    await this.check(me.orgId, input);
    const fields: Record<string, unknown> = {};
    if (input.stack_id !== undefined) fields.stack_id = input.stack_id;
    if (input.name !== undefined) fields.name = input.name.trim();
    if (input.description !== undefined) fields.description = input.description;
    if (input.target_devices !== undefined) fields.target_devices = input.target_devices.map((t) => ({ device_id: t.device_id }));
    if (input.variable_values !== undefined)
      fields.variable_values = this.stacks.secrets.kept(input.variable_values, stored.variable_values, 'variable_values');
    const instance = await this.store.update(me.orgId, id, fields);
    if (!instance) throw appError('INSTANCE_NOT_FOUND');
    await this.audit.byActor(me, 'instance.updated', { instance_id: id, fields: Object.keys(input) });
    return instance;
  }

  async delete(me: AuthContext, id: string): Promise<void> {
    if (!(await this.store.delete(me.orgId, id))) throw appError('INSTANCE_NOT_FOUND');
    await this.audit.byActor(me, 'instance.deleted', { instance_id: id });
  }

  /** Deploys the instance as saved: a new deployment (201 pending), like POST /deployments. */
  async deploy(me: AuthContext, id: string, nameSuffix = '', options: RunOptions = {}): Promise<DeploymentRow> {
    const instance = await this.get(me.orgId, id);
    const deployment = await this.deployments.create(
      me,
      {
        ...options,
        stack_id: instance.stack_id,
        name: `${instance.name}${nameSuffix}`,
        target_devices: instance.target_devices,
        variable_values: instance.variable_values as VariableValuesT,
      },
      instance.id,
    );
    await this.store.update(me.orgId, id, { last_deployment_id: deployment.id });
    return deployment;
  }
}
