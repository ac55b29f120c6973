import type { UsersService } from './admin/users-service';
import type { AgentNatsCredentials } from './agents/nats-credentials';
import type { AgentsService } from './agents/service';
import type { HealthService } from './agents/health-service';
import type { AuthService } from './auth/auth-service';
import type { LdapService } from './auth/ldap-service';
import type { OidcService } from './auth/oidc-service';
import type { SshCertificateAuthority } from './auth/ssh-ca';
import type { SshCertificates } from './auth/ssh-certificates';
import type { TokenSigner } from './auth/tokens';
import type { ControllerConfig } from './config';
import type { ConfigService } from './configs/service';
import type { Db } from './db/knex';
import type { DeploymentService } from './deployments/service';
import type { DeviceService } from './devices/service';
import type { PollScheduler } from './discovery/scheduler';
import type { DiscoveryService } from './discovery/service';
import type { InstanceService } from './instances/service';
import type { JobEngine } from './jobs/engine';
import type { JobService } from './jobs/types';
import type { LiveHub } from './live/hub';
import type { NetboxService } from './netbox/service';
import type { OpsService } from './ops/service';
import type { AuditService } from './platform/audit-service';
import type { SettingsService } from './platform/settings-service';
import type { PlatformStore } from './platforms/store';
import type { DeviceTarget } from './profiles/credentials';
import type { ProfileService } from './profiles/service';
import type { SiteService } from './sites/service';
import type { SnapshotService } from './configs/snapshot-service';
import type { StacksService } from './stacks/service';
import type { TaskService } from './tasks/service';
import type { TemplateService } from './templates/service';
import type { CertificateAuthority } from './tls/ca';
import type { TopologyService } from './topology/service';
import type { SecretBox } from '../../shared/src/crypto/secret-box';

/**
 * Everything the composition root (controller/src/composition.ts) builds, reachable as
 * `app.services`. Route plugins mount routes over these; they construct nothing themselves.
 */
export interface Services {
  config: ControllerConfig;
  db: Db;
  secrets: SecretBox;
  signer: TokenSigner;
  settings: SettingsService;
  audit: AuditService;
  auth: AuthService;
  users: UsersService;
  /** Sign-in providers for GET /api/auth/providers; enterprise sign-in replaces it. */
  providers(): Promise<{ name: string; enabled: boolean }[]>;
  /** Sign-in against the directory named by the ldap.* settings. */
  ldap: LdapService;
  /** Sign-in with the OpenID provider named by the oidc.* settings. */
  oidc: OidcService;
  /** The SSH CA of user certificates (SWITCHBOARD_SSH_CA_KEY, or one made in the data dir). */
  sshCa: SshCertificateAuthority;
  /** Issues SSH user certificates on /login and lists the revoked ones (/ssh/krl). */
  sshCertificates: SshCertificates;
  /** The controller's own CA (GET /api/tls/ca-certificate). */
  ca: CertificateAuthority;
  /** Submitting jobs and recording their outcomes (the engine as areas see it). */
  jobs: JobService;
  /** The concrete job engine (dispatch, sweeps, agent events, the in-process hub). */
  jobEngine: JobEngine;
  agents: AgentsService;
  /** NATS operator mode: agents' credentials and revocations (null without it). */
  agentNatsCredentials: AgentNatsCredentials | null;
  /** GET /api/sites/health: agents, reachability and backup freshness per site. */
  siteHealth: HealthService;
  /** Health, readiness, metrics and the draining state. */
  ops: OpsService;
  /** Inventory for other areas (the built-in agent, tests). */
  inventory: {
    /** loadDeviceTargets bound to the app's database and secret box. */
    loadDeviceTargets(orgId: string, deviceIds: string[]): Promise<DeviceTarget[]>;
  };
  profiles: ProfileService;
  sites: SiteService;
  devices: DeviceService;
  netbox: NetboxService;
  platforms: PlatformStore;
  configs: ConfigService;
  snapshots: SnapshotService;
  templates: TemplateService;
  stacks: StacksService;
  deployments: DeploymentService;
  instances: InstanceService;
  tasks: TaskService;
  discovery: DiscoveryService;
  pollScheduler: PollScheduler;
  topology: TopologyService;
  live: LiveHub;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}
