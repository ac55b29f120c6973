import { hkdfSync } from 'node:crypto';
import type { Logger } from 'pino';
import { SecretBox } from '../../shared/src/crypto/secret-box';
import { AdminStore } from './admin/admin-store';
import { UsersService } from './admin/users-service';
import { installationPrefix } from './agents/installation';
import { AuthService } from './auth/auth-service';
import { AuthStore } from './auth/auth-store';
import { enterpriseSettingsFromEnv } from './auth/ldap-oidc-env';
import { EnterpriseStore } from './auth/ldap-oidc-store';
import { ExternalUsers } from './auth/ldap-oidc-users';
import { LdapService } from './auth/ldap-service';
import { OidcService } from './auth/oidc-service';
import { SshCertificateStore } from './auth/ssh-certificate-store';
import { SshCertificates } from './auth/ssh-certificates';
import { enterpriseProviders } from './auth/enterprise-routes';
import { loadSshCa } from './auth/ssh-ca';
import { TokenSigner } from './auth/tokens';
import type { ControllerConfig } from './config';
import { backupResultSummary } from './configs/backup-job';
import { MaskPool } from './configs/mask-pool';
import { SecretVariables } from './stacks/secret-variables';
import { ConfigService } from './configs/service';
import { ConfigStore } from './configs/store';
import type { Db } from './db/knex';
import { DeploymentRunner } from './deployments/runner';
import { DeploymentService } from './deployments/service';
import { DeploymentStore } from './deployments/store';
import { DeviceService } from './devices/service';
import { DeviceStore } from './devices/store';
import { schedulerOptions } from './discovery/scheduler-options';
import { PollScheduler } from './discovery/scheduler';
import { DiscoveryService } from './discovery/service';
import { DiscoveryStore } from './discovery/store';
import { InstanceService } from './instances/service';
import { InstanceStore } from './instances/store';
import { createJobEngine, type JobService } from './jobs';
import { createAgentsPlane } from './agents/plane';
import { AgentsStore } from './agents/store';
import { HealthService } from './agents/health-service';
import { HealthStore } from './agents/health-store';
import { natsAuthorityOf } from './platform/nats-authority';
import { Lifecycle } from './lifecycle';
import { AgentLiveStore } from './live/agent-store';
import { AgentWatch } from './live/agent-watch';
import { LiveHub } from './live/hub';
import { ALLOWED_HOSTS_SETTING, DestinationPolicy } from './netbox/destination';
import { NetboxService } from './netbox/service';
import { NetboxStore } from './netbox/store';
import { OpsService } from './ops/service';
import { AuditService } from './platform/audit-service';
import { AuditStore } from './platform/audit-store';
import { SettingsService } from './platform/settings-service';
import { SettingsStore } from './platform/settings-store';
import { PlatformStore } from './platforms/store';
import { loadDeviceTargets } from './profiles/credentials';
import { ProfileService } from './profiles/service';
import { ProfileStore } from './profiles/store';
import type { Services } from './services';
import { SiteService } from './sites/service';
import { SiteStore } from './sites/store';
import { SnapshotService } from './configs/snapshot-service';
import { SnapshotStore } from './configs/snapshot-store';
import { StacksService } from './stacks/service';
import { StackStore } from './stacks/store';
import { TaskService } from './tasks/service';
import { TaskStore } from './tasks/store';
import { RenderPool } from './templates/render-pool';
import { TemplateService } from './templates/service';
import { TemplateStore } from './templates/store';
import { loadOrCreateCa } from './tls/ca';
import { TopologyService } from './topology/service';
import { TopologyStore } from './topology/store';

/** Also closes runs whose last two devices finished at the same instant, so keep it short. */
const SNAPSHOT_SWEEP_MS = 2_000;

export interface CompositionOptions {
  config: ControllerConfig;
  db: Db;
  log: Logger;
  /** The ports the HTTP server listens on (NetBox must not be pointed back at the controller). */
  listeningPorts: () => number[];
}

export interface Composition {
  services: Services;
  /** Every background part, in start order. */
  lifecycle: Lifecycle;
}

/** A NATS controller without SWITCHBOARD_NATS_PREFIX uses its installation's own namespace. */
async function withNatsNamespace(config: ControllerConfig, db: Db): Promise<ControllerConfig> {
  if (!config.natsUrl || config.natsPrefix || process.env.SWITCHBOARD_NATS_PREFIX) return config;
  return { ...config, natsPrefix: await installationPrefix(db) };
}

/**
 * The composition root: builds every store, service, runner and background loop of the controller
 * in dependency order, and lists the background parts in the order they start. Route plugins only
 * mount routes over the services built here; nothing else constructs a service.
 */
export async function compose(options: CompositionOptions): Promise<Composition> {
  const { db, log } = options;
  const config = await withNatsNamespace(options.config, db);
  const lifecycle = new Lifecycle(log);
  const area = (name: string) => log.child({ area: name }) as Logger;

  // Platform: secrets, settings and audit, below every area.
  const secrets = new SecretBox(config.secretKey);
  const signer = new TokenSigner(config.secretKey);
  const settings = new SettingsService(new SettingsStore(db), secrets);
  const audit = new AuditService(new AuditStore(db));
  const auth = new AuthService(new AuthStore(db), signer, settings, audit);
  const users = new UsersService(new AdminStore(db), auth.store, audit);
  // Enterprise sign-in (LDAP, OIDC) and SSH user certificates; settings seeded from the environment.
  await settings.seed(enterpriseSettingsFromEnv(process.env));
  const enterpriseStore = new EnterpriseStore(db);
  const externalUsers = new ExternalUsers(enterpriseStore, audit);
  const ldap = new LdapService(settings, auth, externalUsers, area('auth'));
  const oidc = new OidcService(settings, auth, externalUsers, enterpriseStore, () => config.publicUrl, area('auth'));
  const sshCa = loadSshCa(config.dataDir);
  const sshCertificates = new SshCertificates(sshCa, new SshCertificateStore(db), settings, audit);

  // Job machinery and agents. The engine starts after every area registered its handlers below.
  const agentsStore = new AgentsStore(db);
  const { engine: jobEngine, plane } = createJobEngine({
    config,
    db,
    log,
    settings,
    agents: agentsStore,
    targets: (q, orgId, deviceIds) => loadDeviceTargets(q, secrets, orgId, deviceIds),
    authority: natsAuthorityOf(config),
  });
  const jobs: JobService = jobEngine;
  const { agents, agentNatsCredentials } = createAgentsPlane({ store: agentsStore, engine: jobEngine, plane, settings, audit, log });
  const ops = new OpsService({ config, db, jobEngine, agents }, log);

  // Inventory.
  const profiles = new ProfileService(new ProfileStore(db), secrets, audit);
  const sites = new SiteService(new SiteStore(db), audit);
  const devices = new DeviceService(new DeviceStore(db), settings, audit, profiles);
  const policy = async () => new DestinationPolicy(await settings.get<string[]>(ALLOWED_HOSTS_SETTING), options.listeningPorts);
  const netbox = new NetboxService(new NetboxStore(db), new DeviceStore(db), secrets, settings, audit, policy, log);
  const platforms = new PlatformStore(db);

  // Config backups and snapshots: 'backup' and 'test_credential' outcomes.
  // The masks' HMAC key; long texts are masked in the pool's workers, off the event loop.
  const masks = new MaskPool(Buffer.from(hkdfSync('sha256', config.secretKey, 'switchboard', 'config-secret-mask', 32)));
  const configs = new ConfigService(new ConfigStore(db), new SnapshotStore(db), secrets, jobs, area('configs'), { masks, audit });
  const snapshots = new SnapshotService(new SnapshotStore(db), configs, area('configs'), audit);
  jobs.onOutcome('backup', async (outcome, trx) => void (await configs.recordBackup(outcome, trx)), {
    storedResult: backupResultSummary,
    handleMany: async (outcomes, trx) => void (await configs.recordBackups(outcomes, trx)),
  });
  // Credential tests are answered from jobs.wait; there is nothing to store.
  jobs.onOutcome('test_credential', async () => undefined);

  // Templates, stacks, deployments ('deploy', 'rollback', 'dry_run' outcomes), instances, tasks.
  const renderer = new RenderPool();
  const templates = new TemplateService(new TemplateStore(db), platforms, audit, renderer);
  const stacks = new StacksService(new StackStore(db), audit, templates, new SecretVariables((value) => masks.maskValue(value)));
  const deploymentStore = new DeploymentStore(db);
  const runner = new DeploymentRunner(deploymentStore, jobs, log, { sweepIntervalMs: 2_000, staleMs: 5_000, ...config.deployments });
  runner.register();
  const deployments = new DeploymentService(deploymentStore, stacks, runner, audit, configs);
  const instances = new InstanceService(new InstanceStore(db), stacks, deployments, audit);
  const tasks = new TaskService(new TaskStore(db), snapshots, instances, audit, log);

  // Discovery ('poll' outcomes) and topology.
  const discovery = new DiscoveryService(new DiscoveryStore(db), settings, jobs, area('discovery'));
  const pollScheduler = new PollScheduler(discovery, settings, jobs, area('discovery'), schedulerOptions(config));
  // The records live in discovery_sections; the job row keeps how each section went.
  jobs.onOutcome('poll', (outcome, trx) => discovery.recordOutcome(outcome, trx), {
    storedResult: ({ records: _, ...rest }) => rest,
    handleMany: (outcomes, trx) => discovery.recordOutcomes(outcomes, trx),
  });
  const topology = new TopologyService(new TopologyStore(db));

  // Live progress for the console.
  const hub = new LiveHub(db, config.databaseUrl, log);
  const agentWatch = new AgentWatch({
    store: new AgentLiveStore(db),
    liveness: () => agents.liveness(),
    watchedOrgs: () => hub.watchedOrgs(),
    publish: (event) => hub.publish(event),
    log,
  });
  hub.onWatch((orgId) => agentWatch.learn(orgId));

  lifecycleOf(lifecycle, {
    config,
    log,
    jobEngine,
    ops,
    agentNatsCredentials,
    snapshots,
    runner,
    tasks,
    hub,
    agentWatch,
    pollScheduler,
    renderer,
    masks,
  });

  const services: Services = {
    config,
    db,
    secrets,
    signer,
    settings,
    audit,
    auth,
    users,
    providers: () => enterpriseProviders(settings),
    ldap,
    oidc,
    sshCa,
    sshCertificates,
    ca: await loadOrCreateCa(config),
    jobs,
    jobEngine,
    agents,
    agentNatsCredentials,
    siteHealth: new HealthService(new HealthStore(db), agents),
    ops,
    inventory: { loadDeviceTargets: (orgId, deviceIds) => loadDeviceTargets(db, secrets, orgId, deviceIds) },
    profiles,
    sites,
    devices,
    netbox,
    platforms,
    configs,
    snapshots,
    templates,
    stacks,
    deployments,
    instances,
    tasks,
    discovery,
    pollScheduler,
    topology,
    live: hub,
  };
  return { services, lifecycle };
}

type Parts = Pick<Services, 'config' | 'jobEngine' | 'ops' | 'agentNatsCredentials' | 'snapshots' | 'tasks' | 'pollScheduler'> & {
  log: Logger;
  runner: DeploymentRunner;
  hub: LiveHub;
  agentWatch: AgentWatch;
  renderer: RenderPool;
  masks: MaskPool;
};

/** The background parts in start order: the job engine first, the loops that submit jobs after it. */
function lifecycleOf(lifecycle: Lifecycle, p: Parts): void {
  const log = p.log.child({ area: 'configs' });
  let snapshotTimer: NodeJS.Timeout | null = null;
  const sweep = () =>
    p.snapshots.sweep().then(
      (ended) => ended && log.info({ ended }, 'closed snapshot collections (all devices reported, or deadline passed)'),
      (err) => log.error({ err }, 'snapshot sweep failed'),
    );
  lifecycle.add({ name: 'job engine', start: () => p.jobEngine.start(), stop: () => p.jobEngine.stop() });
  lifecycle.add({ name: 'nats watch', start: () => p.ops.watchTransport(p.jobEngine) });
  // Operator mode: a NATS server started from an older account JWT learns the revocations again.
  const credentials = p.agentNatsCredentials;
  if (credentials) lifecycle.add({ name: 'nats revocations', start: () => credentials.revoked(), stop: () => credentials.stop() });
  lifecycle.add({
    name: 'snapshot sweep',
    start: () => {
      void sweep(); // a restart finishes what was overdue while the controller was down
      snapshotTimer = setInterval(sweep, SNAPSHOT_SWEEP_MS);
      snapshotTimer.unref();
    },
    stop: () => {
      if (snapshotTimer) clearInterval(snapshotTimer);
    },
  });
  lifecycle.add({ name: 'config masks', stop: () => p.masks.close() });
  lifecycle.add({ name: 'template renderer', stop: () => p.renderer.close() });
  lifecycle.add({ name: 'deployment runner', start: () => p.runner.start(), stop: () => p.runner.stop() });
  lifecycle.add({ name: 'scheduled tasks', start: () => p.tasks.start(p.config.tasks?.tickMs ?? 1_000), stop: () => p.tasks.stop() });
  lifecycle.add({ name: 'live hub', start: () => p.hub.start(), stop: () => p.hub.stop() });
  lifecycle.add({ name: 'agent watch', start: () => p.agentWatch.start(), stop: () => p.agentWatch.stop() });
  if (p.config.discovery?.scheduler !== false) {
    lifecycle.add({ name: 'poll scheduler', start: () => p.pollScheduler.start(), stop: () => p.pollScheduler.stop() });
  }
}
