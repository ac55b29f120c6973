import { XMLValidator } from 'fast-xml-parser';
import type { Knex } from 'knex';
import { groupBy } from '../../../shared/src/group-by';
import type { AuditService } from '../platform/audit-service';
import type { AuthContext } from '../auth/auth-service';
import type { ConfigService, TextToMask } from '../configs/service';
import { appError } from '../errors/app-error';
import { PlatformStore } from '../platforms/store';
import type { VariableValuesT } from '../stacks/schemas';
import type { ResolvedJob, StacksService } from '../stacks/service';
import type { StackRow } from '../stacks/store';
import { findEmptyReplaces } from './empty-payload';
import type { DeploymentRunner } from './runner';
import type { DeploymentRow, DeploymentStore, EntryRow, LogLine, NewDeployment, NewDeploymentDevice } from './store';

/** How a deployment runs (POST /deployments and instance runs). */
export interface RunOptions {
  /** Send a replace whose rendered payload is empty (which wipes its target) anyway. */
  allow_empty_replace?: boolean;
  /** Compute each device's diff (job kind dry_run) and change nothing. */
  dry_run?: boolean;
}

export interface DeploymentInput extends RunOptions {
  stack_id: string;
  name: string;
  target_devices: { device_id: string }[];
  variable_values?: VariableValuesT;
}

const failed = (detail: string) => appError('STACK_RESOLUTION_FAILED', `Stack resolution failed: ${detail}`);

/** What a device entry shows of its texts. */
interface EntryShown {
  device_id: string;
  transport: string;
  rendered_config: string;
  config_format: string;
  dry_run_diff: string | null;
  error_message: string | null;
}

/** The config format each deploy transport's dry run diffs. */
const DIFF_FORMAT: Record<string, string> = { ssh: 'cli', netconf: 'xml', gnmi: 'json' };

/** What one structured transport carries: gNMI JSON, NETCONF XML (cli templates go over SSH, unchecked). */
function checkPayload(job: ResolvedJob, transport: 'gnmi' | 'netconf'): string | null {
  const where = `template '${job.template_name}' for device ${job.device_name}`;
  const wanted = transport === 'gnmi' ? 'json' : 'xml';
  if (job.config_format !== wanted) return `${where} is ${job.config_format}, but ${transport} takes ${wanted}`;
  if (job.operation === 'delete' && job.rendered_config.trim() === '') return null;
  if (wanted === 'json') {
    try {
      JSON.parse(job.rendered_config);
    } catch (err) {
      return `${where} does not render valid JSON: ${(err as Error).message}`;
    }
  } else {
    const valid = XMLValidator.validate(`<root>${job.rendered_config}</root>`);
    if (valid !== true) return `${where} does not render well-formed XML: line ${valid.err.line}: ${valid.err.msg}`;
  }
  return null;
}

/** The 400 for replaces that would wipe their target, naming them. */
function emptyReplaceRefused(jobs: ResolvedJob[]) {
  const first = jobs[0];
  const more = jobs.length > 1 ? ` (and ${jobs.length - 1} more)` : '';
  return appError(
    'EMPTY_REPLACE_REFUSED',
    `Refused: template '${first.template_name}' (service ${first.position}) renders an empty ${first.config_format} payload for device ` +
      `${first.device_name} with operation replace${first.target_path ? ` on ${first.target_path}` : ''}, which would empty that part of the ` +
      `device's config${more}. Check the variables, or send allow_empty_replace: true if that is what you mean`,
    {
      empty_replaces: jobs.slice(0, 100).map((j) => ({
        service: String(j.position),
        template: j.template_name,
        device_id: j.device_id,
        device_name: j.device_name,
        target_path: j.target_path,
      })),
    },
  );
}

/** The log line of an empty replace a request let through (allow_empty_replace, or a dry run). */
function emptyReplaceLine(j: ResolvedJob, options: RunOptions) {
  const why = !options.dry_run
    ? 'sent because the request set allow_empty_replace'
    : options.allow_empty_replace
      ? 'a real run with allow_empty_replace would send it'
      : 'a real run is refused unless it sets allow_empty_replace';
  const where = j.target_path ? ` on ${j.target_path}` : '';
  return {
    level: 'warn' as const,
    device_id: j.device_id,
    message:
      `${j.device_name}: template '${j.template_name}' renders an empty payload with operation replace${where}, which empties that ` +
      `part of the config; ${why}`,
  };
}

/** A stack rendered for a deployment's targets and checked: what creating the deployment stores. */
interface DeploymentPlan {
  stack: StackRow;
  /** The target device ids, once each, in request order. */
  targets: string[];
  jobs: ResolvedJob[];
  /** The replaces with an empty payload that the request lets through. */
  emptyReplaces: ResolvedJob[];
  dryRun: boolean;
  devices: NewDeploymentDevice[];
}

/** The row of a new deployment: pending until the runner starts it. */
function pendingDeployment(me: AuthContext, input: DeploymentInput, plan: DeploymentPlan, instanceId: string | null): NewDeployment {
  const { stack, targets } = plan;
  return {
    org_id: me.orgId,
    stack_id: stack.id,
    instance_id: instanceId,
    name: input.name,
    status: 'pending',
    atomic: stack.atomic,
    total_devices: targets.length,
    target_devices: targets.map((device_id) => ({ device_id })),
    variable_values: input.variable_values ?? {},
    dry_run: plan.dryRun,
    created_by: me.userId,
    created_by_name: me.username,
  };
}

/** A rendered job as the deployment stores it: one service entry of its device. */
function serviceEntry(j: ResolvedJob): Omit<EntryRow, 'deployment_id'> {
  return {
    device_id: j.device_id,
    service_position: j.position,
    service_order: j.service_order,
    service_name: j.template_name,
    template_id: j.template_id,
    rendered_config: j.rendered_config,
    target_path: j.target_path,
    operation: j.operation,
    config_format: j.config_format,
    secrets: j.secrets.length > 0 ? j.secrets : null,
  };
}

/** The first line of a deployment's log: who created it, from what, and what it will do. */
function createdLine(me: AuthContext, { stack, targets, jobs, dryRun }: DeploymentPlan): LogLine {
  return {
    level: 'info',
    message: dryRun
      ? `Dry run created by ${me.username}: stack ${stack.name}, ${targets.length} device(s), ${jobs.length} service(s); each device's ` +
        `diff is computed, nothing is changed and no backup is taken`
      : `Deployment created by ${me.username}: stack ${stack.name}, ${targets.length} device(s), ${jobs.length} service push(es), ` +
        `${stack.atomic ? 'atomic' : 'not atomic'}`,
  };
}

/**
 * The one transport a device's change set goes over, after checking its jobs fit it: cli
 * templates are typed over SSH (whatever platform labels them), structured ones go over their
 * platform's gNMI or NETCONF, which must be the device's automation transport.
 */
function deviceTransport(list: ResolvedJob[], transports: Map<string, string>): 'gnmi' | 'netconf' | 'ssh' {
  const device = list[0].device;
  const cli = list.filter((j) => j.config_format === 'cli');
  if (cli.length === list.length) {
    const deletion = list.find((job) => job.operation === 'delete');
    if (deletion)
      throw failed(
        `template '${deletion.template_name}' for device ${device.name} is a cli template with operation delete; write the 'no …' lines in ` +
          `the template instead`,
      );
    return 'ssh';
  }
  if (cli.length > 0) {
    throw failed(
      `device ${device.name} gets both cli templates (pushed over SSH) and structured ones ` +
        `(${[...new Set(list.filter((j) => j.config_format !== 'cli').map((j) => j.config_format))].join(', ')}); one deployment pushes ` +
        `one change set per device over one transport`,
    );
  }
  const wanted = new Set(list.map((j) => transports.get(j.platform)));
  if (wanted.size > 1)
    throw failed(
      `device ${device.name} gets templates for both gNMI and NETCONF; one deployment pushes one change set per device over one transport`,
    );
  const transport = [...wanted][0];
  if (transport !== 'gnmi' && transport !== 'netconf')
    throw failed(`template '${list[0].template_name}' names platform '${list[0].platform}', which no longer exists`);
  if (device.automation_transport !== transport) {
    throw failed(
      `device ${device.name}: its connection profile's automation transport is ${device.automation_transport ?? 'not set'}, but its ` +
        `templates target ${transport} platforms; set automation_transport to ${transport} on the profile`,
    );
  }
  for (const job of list) {
    const problem = checkPayload(job, transport);
    if (problem) throw failed(problem);
  }
  return transport;
}

/** The 409 for devices another open deployment holds, naming them and it. */
async function refuseBusyDevices(
  store: DeploymentStore,
  trx: Knex.Transaction,
  orgId: string,
  deviceIds: string[],
  exceptId: string | null,
): Promise<void> {
  await store.lockOrgChanges(trx, orgId);
  const busy = await store.busyDevices(trx, orgId, deviceIds, exceptId);
  if (busy.length === 0) return;
  const first = busy[0];
  throw appError(
    'DEVICES_IN_OPEN_DEPLOYMENT',
    `Refused: device ${first.device_name}${busy.length > 1 ? ` (and others)` : ''} is in deployment '${first.name}' (${first.id}), which is ` +
      `still ${first.status}; two deployments changing one device at once could restore each other's backups over the newer ` +
      `change. Wait until that deployment has ended`,
    { busy: busy.map((b) => ({ device_name: b.device_name, deployment_id: b.id, deployment_name: b.name, deployment_status: b.status })) },
  );
}

/** Deployment rules: checks and creation (201 pending at once), reads, logs, rollback. */
export class DeploymentService {
  private readonly platforms: PlatformStore;

  constructor(
    readonly store: DeploymentStore,
    private readonly stacks: StacksService,
    readonly runner: DeploymentRunner,
    private readonly audit: AuditService,
    /** The configs area: masks the device secrets in dry-run diffs. */
    private readonly configs: ConfigService,
  ) {
    this.platforms = new PlatformStore(store.db);
  }

  /** The organization's deployments, newest first, their secret variables masked. */
  async list(orgId: string, filter: { stack_id?: string; limit: number; offset: number }) {
    return (await this.store.list(orgId, filter)).map((d) => this.shown(d));
  }

  async get(orgId: string, id: string): Promise<DeploymentRow> {
    const deployment = await this.store.find(orgId, id);
    if (!deployment) throw appError('DEPLOYMENT_NOT_FOUND');
    return deployment;
  }

  /**
   * One deployment with its device entries, shown as stored configs are: its secret variables,
   * and the device secrets in its rendered configs and dry runs' diffs, masked; as stored for
   * `reveal` (the caller's configs.secrets is checked by the route).
   */
  async getWithDevices(orgId: string, id: string, reveal = false) {
    const deployment = await this.get(orgId, id);
    const entries = await this.store.deviceEntries(id);
    const shown = reveal ? entries : await this.maskedEntries(orgId, entries, await this.secretValues(deployment));
    const devices = shown.map(({ device_type: _type, ...entry }) => entry);
    return { ...(reveal ? deployment : this.shown(deployment)), devices };
  }

  /** A deployment as the API shows it: its secret variables masked (every route that answers with one). */
  shown<T extends { variable_values: Record<string, unknown> }>(deployment: T): T {
    return { ...deployment, variable_values: this.stacks.secrets.shown(deployment.variable_values) };
  }

  /**
   * The values of a deployment's secret variables: its own, and those its rendered configs hold
   * (its stack's defaults among them, as they were when it rendered).
   */
  private async secretValues(deployment: DeploymentRow): Promise<string[]> {
    const rendered = await this.store.entrySecrets(deployment.id);
    return [...new Set([...this.stacks.secrets.values(deployment.variable_values), ...rendered])];
  }

  /**
   * Each entry's rendered config and each device's dry-run diff masked (a device has one diff
   * however many entries, services, it has), then the deployment's secret variable values hidden
   * wherever they are, error messages included (a refused line quotes the value).
   */
  private async maskedEntries<E extends EntryShown>(orgId: string, entries: E[], secrets: string[]): Promise<E[]> {
    const diffs = new Map<string, TextToMask>();
    for (const e of entries) {
      if (e.dry_run_diff) diffs.set(e.device_id, { deviceId: e.device_id, text: e.dry_run_diff, format: DIFF_FORMAT[e.transport], diff: true });
    }
    const configs = entries.map((e) => ({ deviceId: e.device_id, text: e.rendered_config, format: e.config_format }));
    const masked = (await this.configs.maskTexts(orgId, [...configs, ...diffs.values()])).map((t) => this.stacks.secrets.hide(t, secrets));
    const diffOf = new Map([...diffs.keys()].map((deviceId, i) => [deviceId, masked[configs.length + i]]));
    const hide = (text: string | null) => (text === null ? null : this.stacks.secrets.hide(text, secrets));
    return entries.map((e, i) => ({
      ...e,
      rendered_config: masked[i],
      dry_run_diff: diffOf.get(e.device_id) ?? e.dry_run_diff,
      error_message: hide(e.error_message),
    }));
  }

  /**
   * Renders the stack for the targets and checks everything that can be checked before a device
   * is touched (transports, formats, payloads); then stores the deployment as pending and starts
   * it in the background.
   */
  async create(me: AuthContext, input: DeploymentInput, instanceId: string | null = null): Promise<DeploymentRow> {
    const plan = await this.plan(me.orgId, input);
    const deployment = await this.storePending(me, input, plan, instanceId);
    // The first devices start while the audit record is written.
    this.runner.schedule(deployment.id);
    await this.audit.byActor(me, 'deployment.created', {
      deployment_id: deployment.id,
      stack_id: plan.stack.id,
      instance_id: instanceId,
      devices: plan.targets.length,
      dry_run: plan.dryRun,
    });
    return deployment;
  }

  /** The stack rendered for the request's targets, with every check made that can be made before a device is touched. */
  private async plan(orgId: string, input: DeploymentInput): Promise<DeploymentPlan> {
    const stack = await this.stacks.store.find(orgId, input.stack_id);
    if (!stack) throw failed(`stack ${input.stack_id} not found`);
    const targets = [...new Set(input.target_devices.map((t) => t.device_id))];
    if (targets.length === 0) throw failed('target_devices is empty');
    const jobs = await this.stacks.resolve(orgId, stack, input.variable_values ?? {}, targets);
    const emptyReplaces = findEmptyReplaces(jobs);
    // A dry run changes nothing: it shows what the empty replace would do instead of refusing it.
    if (emptyReplaces.length > 0 && !input.allow_empty_replace && !input.dry_run) throw emptyReplaceRefused(emptyReplaces);
    const dryRun = input.dry_run === true;
    const devices = await this.targetDevices(targets, jobs);
    return { stack, targets, jobs, emptyReplaces, dryRun, devices };
  }

  /** Each target in request order, with the one transport its jobs go over (checked by deviceTransport). */
  private async targetDevices(targets: string[], jobs: ResolvedJob[]): Promise<NewDeploymentDevice[]> {
    const transports = new Map((await this.platforms.list()).map((p) => [p.name, p.transport]));
    const byDevice = groupBy(jobs, (j) => j.device_id);
    return targets.map((deviceId, position) => {
      const list = byDevice.get(deviceId);
      if (!list) throw failed(`device ${deviceId} is a target but no service runs on it (its services have other devices in variable_values)`);
      return { device_id: deviceId, device_name: list[0].device.name, position, transport: deviceTransport(list, transports) };
    });
  }

  /** Stores the deployment as pending, with its devices, its service entries and its first log lines. */
  private storePending(me: AuthContext, input: DeploymentInput, plan: DeploymentPlan, instanceId: string | null): Promise<DeploymentRow> {
    return this.store.db.transaction(async (trx) => {
      if (!plan.dryRun) await refuseBusyDevices(this.store, trx, me.orgId, plan.targets, null);
      const row = await this.store.insert(trx, pendingDeployment(me, input, plan, instanceId), plan.devices, plan.jobs.map(serviceEntry));
      await this.store.log(trx, row.id, me.orgId, [createdLine(me, plan), ...plan.emptyReplaces.map((j) => emptyReplaceLine(j, input))]);
      return row;
    });
  }

  async logs(orgId: string, id: string, filter: { device_id?: string; limit: number; offset: number }) {
    const deployment = await this.get(orgId, id);
    const [page, secrets] = await Promise.all([this.store.logs(id, filter), this.secretValues(deployment)]);
    // A refused line's error quotes the line, and with it a secret variable's value.
    const logs = page.logs.map((l) => ({ ...l, message: this.stacks.secrets.hide(l.message, secrets) }));
    return { logs, total: page.total, limit: filter.limit, offset: filter.offset };
  }

  /**
   * Starts pushing back each device's pre-deployment backup (replace semantics). Allowed from
   * completed or failed with at least one backup; a failed rollback can be retried (devices
   * already rolled back are left alone). A device whose running config is no longer the one the
   * deployment left is not rolled back (rollback_failed, saying so) unless `force` is set.
   */
  async rollback(me: AuthContext, id: string, force = false): Promise<DeploymentRow> {
    await this.get(me.orgId, id);
    const deployment = await this.store.db.transaction(async (trx) => {
      const row = await this.store.lock(trx, id);
      if (!row || row.org_id !== me.orgId) throw appError('DEPLOYMENT_NOT_FOUND');
      if (row.status !== 'completed' && row.status !== 'failed') {
        throw appError('ROLLBACK_NOT_ALLOWED', `Rollback is only possible from status completed or failed; this deployment is ${row.status}`);
      }
      const devices = await this.store.devices(id, trx);
      const backed = devices.filter((d) => d.backup_config_id);
      if (backed.length === 0)
        throw appError('ROLLBACK_NOT_ALLOWED', 'Rollback is not possible: no device of this deployment has a pre-deployment backup');
      const todo = backed.filter((d) => d.status !== 'rolled_back');
      if (todo.length === 0) throw appError('ROLLBACK_NOT_ALLOWED', 'Rollback is not possible: every device with a backup is already rolled back');
      await refuseBusyDevices(
        this.store,
        trx,
        me.orgId,
        todo.map((d) => d.device_id),
        id,
      );
      const moved = await this.store.moveDevices(trx, id, [...new Set(todo.map((d) => d.status))], 'rollback_queued', { withBackup: true });
      await this.store.update(trx, id, {
        status: 'rolling_back',
        completed_at: null,
        error_message: null,
        rollback_attempts: row.rollback_attempts + 1,
        rollback_force: force,
      });
      const forced = force ? ', forced: also onto devices changed since the deployment' : '';
      await this.store.log(trx, id, me.orgId, [
        {
          level: force ? 'warn' : 'info',
          message: `Rollback requested by ${me.username}: pushing back the pre-deployment backups of ${moved.length} device(s)${forced}`,
        },
      ]);
      return (await this.store.find(me.orgId, id, trx))!;
    });
    await this.audit.byActor(me, 'deployment.rollback', { deployment_id: id, force });
    this.runner.schedule(id);
    return deployment;
  }
}
