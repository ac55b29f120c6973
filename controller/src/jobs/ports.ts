/**
 * What the job engine needs from other areas, declared here so it depends on no area: an
 * agent directory (implemented by the agents area's store) and a target loader (the profiles
 * area's credential loader). The composition root plugs the two in.
 */
import type { Knex } from 'knex';
import type { DeviceCredentials } from '../../../shared/src/device/values';
import type { PublicJwk } from '../../../shared/src/jobs/crypto';
import { ALLOWED_NETWORKS_GUARD, type HeartbeatHealth } from '../../../shared/src/jobs/messages';

/** Everything an agent needs to reach one device: address, dialect, ports, transport, credentials. */
export interface DeviceTarget {
  device_id: string;
  name: string;
  host: string;
  /** SSH CLI dialect (vendor_ios, …, generic, custom, snmp). */
  device_type: string;
  platform: string;
  protocol: string;
  site_id: string | null;
  profile_id: string;
  ports: { ssh: number; netconf: number; gnmi: number };
  gnmi_tls: boolean;
  gnmi_skip_verify: boolean;
  automation_transport: 'gnmi' | 'netconf' | null;
  /** The profile's private CA (PEM) for TLS to the device; null: the agent's own roots. */
  ca_certificate: string | null;
  /** The profile's allowed_networks (CIDRs its credentials may be sent to); empty: no limit. */
  allowed_networks: string[];
  /** The pinned SSH host key (trust on first use); null until an agent reported one. */
  ssh_host_key: { type: string; fingerprint: string } | null;
  /** SHA-256 of the pinned gNMI TLS certificate (trust on first use); null until an agent reported one. */
  gnmi_cert_sha256: string | null;
  /** Decrypted login material of the device's connection profile (a secret it lacks is absent). Never log or return it. */
  credentials: DeviceCredentials;
}

/** What the job machinery needs to check an agent's signature and membership. */
export interface AgentIdentityRow {
  id: string;
  org_id: string;
  name: string;
  site_id: string | null;
  public_key: PublicJwk | null;
  revoked_at: Date | null;
  last_seen_at: Date | null;
  /** What it said it can do at enrollment or in its last heartbeat (job kinds, transports, guards); read for pool members. */
  capabilities?: string[];
}

export interface HeartbeatFields {
  version: string;
  capabilities: string[];
  active_jobs: number;
  max_jobs: number;
  pending_events: number;
  health?: HeartbeatHealth | null;
}

/** How agent heartbeats are judged (from the settings agents.heartbeat_seconds and agents.offline_after_seconds). */
export interface Liveness {
  heartbeatMs: number;
  offlineMs: number;
}

/** Offline: revoked, never seen, or silent for longer than the offline threshold. */
export function isOffline(agent: { last_seen_at: Date | null; revoked_at?: Date | null }, live: Liveness, now = Date.now()): boolean {
  return Boolean(agent.revoked_at) || !agent.last_seen_at || now - agent.last_seen_at.getTime() > live.offlineMs;
}

/**
 * The enrolled agents that do not enforce a profile's allowed_networks (older than the field): a
 * job whose profile has them waits while its pool has one, as any agent of a pool may take its
 * batches. An agent not enrolled yet (no key) can take none, whatever it will say it can do.
 */
export function unguarded<A extends Pick<AgentIdentityRow, 'capabilities' | 'public_key'>>(agents: A[]): A[] {
  return agents.filter((a) => a.public_key && !a.capabilities?.includes(ALLOWED_NETWORKS_GUARD));
}

/** The agents the engine addresses, signs for and reports on. `q` runs the query in the caller's transaction. */
export interface AgentDirectory {
  identities(ids: string[], q?: Knex): Promise<Map<string, AgentIdentityRow>>;
  /**
   * Records a heartbeat signed at `at` when that is later than the last one recorded (null
   * otherwise: a copy, or an older one); answers when the agent was last seen before it (null: never).
   */
  heartbeat(id: string, at: Date, fields: HeartbeatFields): Promise<{ previousSeenAt: Date | null } | null>;
  /** Of these sites, those with at least one agent that is not revoked. */
  sitesWithAgents(siteIds: string[], q?: Knex): Promise<Set<string>>;
  /** The pool's agents that are not revoked. */
  poolMembers(orgId: string, pool: string, q?: Knex): Promise<AgentIdentityRow[]>;
  siteNames(siteIds: string[], q?: Knex): Promise<Map<string, string>>;
  agentName(id: string, q?: Knex): Promise<{ name: string; last_seen_at: Date | null } | undefined>;
  /** Adds to the agent's completed and failed job counters (shown in GET /api/agents). */
  addJobCounts(agentId: string, completed: number, failed: number): Promise<void>;
}

/** Loads devices of one organization with their decrypted credentials, for dispatch only (seal before sending). */
export type TargetLoader = (q: Knex, orgId: string, deviceIds: string[]) => Promise<DeviceTarget[]>;
