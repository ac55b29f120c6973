/**
 * The one small interface every device transport implements. An agent opens a session,
 * does its work through it and closes it; the job runner never touches ssh2, grpc-js or
 * NETCONF framing directly.
 */

import type {
  ConfigFormat,
  DeviceCredentials,
  EditOperation,
  FetchedConfig,
  GnmiCert,
  SshHostKey,
  Transport,
} from '../../../shared/src/device/values';

export type { ConfigFormat, DeviceCredentials, EditOperation, FetchedConfig, GnmiCert, SshHostKey, Transport };

/** Everything a driver needs to reach one device. */
export interface DeviceTarget {
  id: string;
  name: string;
  host: string;
  /** API.md device_type; for SSH CLI it selects the dialect. */
  device_type: string;
  credentials: DeviceCredentials;
  ports: { ssh: number; netconf: number; gnmi: number };
  gnmi_tls: boolean;
  gnmi_skip_verify: boolean;
  /**
   * The host key pinned for this device (trust on first use). SSH-based drivers refuse any
   * other key before authenticating; null or absent: any key is accepted and reported.
   */
  ssh_host_key?: SshHostKey | null;
  /**
   * SHA-256 fingerprint of the gNMI TLS certificate pinned for this device (trust on first use).
   * The gNMI driver refuses any other certificate before an RPC (and its credentials) is sent,
   * gnmi_skip_verify or not; null or absent: any certificate is accepted and reported.
   */
  gnmi_cert_sha256?: string | null;
  /**
   * The profile's private CA (PEM) for TLS to the device: trusted instead of the process's roots
   * (NODE_EXTRA_CA_CERTS, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH). null or absent: those roots.
   */
  ca_certificate?: string | null;
  /**
   * The connection profile's allowed_networks: the session opener (agent/src/jobs/context.ts)
   * refuses a host outside them before a driver is called. Drivers do not read it.
   */
  allowed_networks?: readonly string[];
  /**
   * Set when `host` is the address the opener resolved a DNS name to and checked: the name, for
   * TLS (server name indication and certificate verification). Absent: `host` is what TLS checks.
   */
  tls_server_name?: string;
}

/** Separate limits so one slow or dead device never holds a worker for long. */
export interface SessionLimits {
  /** TCP connect plus authentication. */
  connectTimeoutMs: number;
  /** One command or RPC, from send to complete answer. */
  commandTimeoutMs: number;
  /** Longest silence tolerated while output is still arriving. */
  idleTimeoutMs: number;
  /**
   * A command the device may work on in silence for minutes: a commit, a configuration replace or
   * load, an edit of a large datastore (both its overall and its idle limit). Cut off at the
   * command limit, a commit still running on the device would be reported as failed and a restore
   * pushed over it.
   */
  commitTimeoutMs: number;
  /** TCP / protocol keepalive interval. */
  keepaliveIntervalMs: number;
}

export const DEFAULT_LIMITS: SessionLimits = {
  connectTimeoutMs: 10_000,
  commandTimeoutMs: 60_000,
  idleTimeoutMs: 20_000,
  // Inside the controller's 15-minute deploy deadline with room for a backup before, a confirmed and
  // a confirming commit, and a restore's two after (DEPLOY_DEADLINE_MS).
  commitTimeoutMs: 120_000,
  keepaliveIntervalMs: 10_000,
};

/**
 * Largest answer a driver takes from a device (one CLI command's output, one NETCONF message, one
 * gNMI message): more is refused with a DriverError. Parsing XML or JSON costs twenty to seventy
 * times its size in memory, so a bound much larger than any real configuration could end the agent.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** Session transcript sink; drivers mask every secret before writing. */
export interface Transcript {
  write(direction: 'sent' | 'received' | 'info', text: string): void;
}

/** One rendered template applied to a device. */
export interface ConfigChange {
  /** YANG / OpenConfig path (gNMI), subtree label (NETCONF) or label (CLI). */
  target_path?: string | null;
  operation: EditOperation;
  config_format: ConfigFormat;
  config: string;
}

/** A change computed but not made: the running config now, and as it would be after the change. */
export interface ConfigPreview {
  before: string;
  after: string;
}

export interface DeviceSession {
  readonly transport: Transport;
  /** SSH-based sessions: the host key the device offered (reported with the job result). */
  readonly hostKey?: SshHostKey;
  /** gNMI over TLS: the server certificate (reported with the job result). */
  readonly gnmiCert?: GnmiCert;
  /** Running configuration, cleaned so that an unchanged device gives unchanged text. */
  fetchConfig(): Promise<FetchedConfig>;
  /** CLI transports: one show command's cleaned output. */
  run?(command: string): Promise<string>;
  /**
   * Apply every change at once: one SetRequest, one NETCONF commit, or (SSH CLI) the rendered
   * lines typed in configuration mode, committed where the dialect has a commit. A failure that
   * may have left part of the change on the device throws a DriverError with `partial` set.
   */
  apply?(changes: ConfigChange[]): Promise<void>;
  /**
   * Put a previously fetched configuration back with replace semantics. `scope`: the target paths
   * a deployment changed (restoreScope); a driver that can put back part of a configuration (gNMI)
   * puts back only those subtrees and leaves the rest as the device has it. Absent: all of it.
   */
  restore?(config: FetchedConfig, scope?: string[]): Promise<void>;
  /**
   * Whether `running` is `backup` where restore(backup, scope) puts it back (a driver that scopes
   * restores). Absent: the whole texts must be equal.
   */
  restored?(running: FetchedConfig, backup: FetchedConfig, scope: string[]): boolean;
  /**
   * Dry run: what apply(changes) would make of the running config, leaving the device as it was
   * (texts in fetchConfig's form, so they diff line by line).
   */
  preview?(changes: ConfigChange[]): Promise<ConfigPreview>;
  close(): Promise<void>;
}

export interface DeviceDriver {
  readonly transport: Transport;
  /** Resolves once the session is authenticated and ready for commands. */
  open(target: DeviceTarget, limits?: Partial<SessionLimits>, transcript?: Transcript): Promise<DeviceSession>;
}

/**
 * Errors a driver raises carry a cause class so metrics and operators can tell them apart.
 * 'hostkey': the device's identity is not the pinned one (SSH host key or gNMI TLS certificate).
 */
export type DriverErrorCause = 'auth' | 'timeout' | 'refused' | 'protocol' | 'device' | 'hostkey';

/**
 * A change whose answer never came (a timeout, a dropped session) may have gone in: the error
 * says so (`note`) and is partial, so the deploy job undoes the push.
 */
export function mayHaveGoneIn(err: DriverError, note = 'its answer never came: the change may have gone in'): DriverError {
  return new DriverError(err.kind, `${err.message} (${note})`, { partial: true });
}

export class DriverError extends Error {
  /**
   * apply() only: part of the change may be on the device (a CLI without commit refused a line
   * after it had taken earlier ones, or a line or commit got no answer). The deploy job restores
   * the backup before it reports.
   */
  readonly partial: boolean;

  constructor(
    readonly kind: DriverErrorCause,
    message: string,
    options: { partial?: boolean } = {},
  ) {
    super(message);
    this.name = 'DriverError';
    this.partial = options.partial ?? false;
  }
}
