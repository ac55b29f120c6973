/**
 * What a job kind gets to work with: the device, its decrypted credentials, the session
 * limits, the connection set-up limiter, a log, a transcript and an abort signal that fires
 * at the job's deadline. Sessions opened through `open` are closed when the signal fires.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkMatcher } from '../../../shared/src/device/networks';
import { byLength, secretValuePattern } from '../../../shared/src/secrets/value-pattern';
import type { Semaphore } from '../../../shared/src/jobs/limit';
import type { JobKind, JobParams, JobResult } from '../../../shared/src/jobs/kinds';
import type { JobDevice } from '../../../shared/src/jobs/messages';
import { PLACEHOLDER_MARK } from '../../../shared/src/jobs/transcript';
import type { DriverRegistry } from '../drivers';
import {
  DriverError,
  type DeviceCredentials,
  type DeviceDriver,
  type DeviceSession,
  type DeviceTarget,
  type FetchedConfig,
  type GnmiCert,
  type SessionLimits,
  type SshHostKey,
  type Transcript,
  type Transport,
} from '../drivers/types';

export type LogLevel = 'info' | 'warn' | 'error';

export interface JobContext<K extends JobKind = JobKind> {
  jobId: string;
  device: JobDevice;
  target: DeviceTarget;
  /** The job's params, checked against the kind's schema before the runner starts. */
  params: JobParams<K>;
  signal: AbortSignal;
  log(level: LogLevel, text: string): void;
  /** Opens a session over `transport`, within the agent's limit on connection set-ups at once. */
  open(transport: Transport, transcript?: Transcript): Promise<DeviceSession>;
  /** Replaces every secret in text with ********. */
  mask(text: string): string;
  /**
   * Has the controller store a deploy job's pre-deployment backup before anything changes;
   * resolves to the backup it keeps for the job (an earlier attempt's, on a redelivery).
   */
  storeBackup(backup: FetchedConfig): Promise<FetchedConfig>;
}

export interface JobResultOf<K extends JobKind = JobKind> {
  status: 'succeeded' | 'failed';
  error: string | null;
  result: JobResult<K> | null;
}

/** Runs one kind: its params in, its result out (shared/src/jobs/kinds.ts). */
export type JobKindRunner<K extends JobKind> = (ctx: JobContext<K>) => Promise<JobResultOf<K>>;

export function targetOf(device: JobDevice, credentials: DeviceCredentials): DeviceTarget {
  return {
    id: device.id,
    name: device.name,
    host: device.host,
    device_type: device.device_type,
    credentials,
    ports: device.ports,
    gnmi_tls: device.gnmi_tls,
    gnmi_skip_verify: device.gnmi_skip_verify,
    ssh_host_key: device.ssh_host_key ?? null,
    gnmi_cert_sha256: device.gnmi_cert_sha256 ?? null,
    ca_certificate: device.ca_certificate ?? null,
    allowed_networks: device.allowed_networks ?? [],
  };
}

/**
 * Masks the device's credentials wherever they appear, and `also` (a deployment's secret
 * variable values) as the controller finds them (secretValuePattern: short ones as whole words).
 */
export function makeMask(credentials: DeviceCredentials, also: string[] = []): (text: string) => string {
  const [long, words] = byLength(also);
  const own = [credentials.password, credentials.enable_password, credentials.private_key].filter((s): s is string => typeof s === 'string');
  const pattern = secretValuePattern([...own, ...long], words);
  if (!pattern) return (text) => text;
  return (text) => text.replace(pattern, '********');
}

/**
 * Collects a session transcript as text lines ("> " sent, "# " notes, received as is). A part
 * of it can be left out again (see elideReceived): the device's answer that became the config.
 */
export class TextTranscript implements Transcript {
  private parts: { text: string; received: boolean }[] = [];
  private size = 0;

  constructor(private readonly limit = 1024 * 1024) {}

  write(direction: 'sent' | 'received' | 'info', text: string): void {
    if (this.size > this.limit) return;
    const line = direction === 'sent' ? `> ${text.replace(/\r?\n$/, '')}\n` : direction === 'info' ? `# ${text}\n` : text;
    // A device cannot write a config placeholder (shared/src/jobs/transcript.ts).
    this.parts.push({
      text: line.includes(PLACEHOLDER_MARK) ? line.split(PLACEHOLDER_MARK).join('\uFFFD') : line,
      received: direction === 'received',
    });
    this.size += line.length;
    if (this.size > this.limit) this.parts.push({ text: '\n# (transcript cut at 1 MiB)\n', received: false });
  }

  /** Where the transcript is now, for elideReceived. */
  mark(): number {
    return this.parts.length;
  }

  /**
   * Replaces what the device sent since `mark` with `placeholder` (where the first of it was);
   * what was sent to it and the notes stay.
   */
  elideReceived(mark: number, placeholder: string): void {
    const before = this.parts.slice(0, mark);
    const since = this.parts.slice(mark);
    const first = since.findIndex((p) => p.received);
    if (first < 0) return;
    const kept = since.filter((p) => !p.received);
    kept.splice(first, 0, { text: placeholder, received: false }); // the parts before `first` are all kept
    this.parts = [...before, ...kept];
    this.size = this.parts.reduce((n, p) => n + p.text.length, 0);
  }

  text(): string {
    return this.parts.map((p) => p.text).join('');
  }
}

/** What a session saw of the device's identity; the controller pins the first of each per job. */
export interface DeviceIdentity {
  hostKey?: SshHostKey;
  gnmiCert?: GnmiCert;
}

export interface OpenDeps {
  drivers: DriverRegistry;
  connectSlots: Semaphore;
  limits: Partial<SessionLimits>;
}

/** Every address of a DNS name, in the resolver's order (node:dns lookup, as net.connect would use). */
const resolveAll = async (name: string): Promise<string[]> => (await lookup(name, { all: true })).map((a) => a.address);

/**
 * Where a session to the device may go: the one check, before any driver is called, that the
 * connection profile's credentials go nowhere but its allowed_networks.
 *
 * With no allowed_networks, the target as it is (the driver connects to its host, resolving a name
 * itself, as always). With them, the host is resolved here (an IP address is taken as it is, a DNS
 * name gives every address the resolver answers) and every address must be inside them: one outside
 * refuses the session with a DriverError of kind 'auth' naming the address and the networks, and
 * nothing connects. Otherwise one target per address, in the resolver's order, with that address as
 * its host, so the driver connects to exactly the address checked (a second DNS answer cannot
 * differ); the name stays the TLS server name (tls_server_name). SSH host key and gNMI certificate
 * pins are the device's, so they hold whatever address is used.
 *
 * 'auth' rather than 'refused': the device may well be reachable, it is the credentials that may not
 * go there. 'refused' means "nothing answers on the port" (test-credential reports SSH of a device
 * with an automation transport as merely unavailable then), and would send the operator to look at
 * the network instead of at the device's host and profile.
 */
export async function checkedDestinations(target: DeviceTarget): Promise<DeviceTarget[]> {
  const networks = target.allowed_networks ?? [];
  if (networks.length === 0) return [target];
  const refuse = (detail: string) =>
    new DriverError(
      'auth',
      `refused to log in to ${target.name} at ${target.host}: ${detail} the networks its connection profile allows its credentials to be sent ` +
        `to (allowed_networks: ${networks.join(', ')}); no connection was made`,
    );
  let inside: (address: string) => boolean;
  try {
    inside = networkMatcher(networks);
  } catch (err) {
    throw refuse(`the profile's allowed_networks cannot be read (${(err as Error).message}), so nothing is inside`);
  }
  const literal = isIP(target.host.split('%')[0]) !== 0;
  let addresses: string[];
  if (literal) {
    addresses = [target.host];
  } else {
    try {
      addresses = await resolveAll(target.host);
    } catch (err) {
      throw new DriverError('refused', `${target.host}: the name does not resolve (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (addresses.length === 0) throw new DriverError('refused', `${target.host}: the name resolves to no address`);
  }
  const outside = addresses.filter((address) => !inside(address));
  if (outside.length > 0) {
    const what = outside.join(', ');
    throw refuse(
      literal ? 'the address is outside' : `it resolves to ${addresses.join(', ')}; ${what} ${outside.length === 1 ? 'is' : 'are'} outside`,
    );
  }
  return literal ? [target] : addresses.map((address) => ({ ...target, host: address, tls_server_name: target.host }));
}

/**
 * `open` for one job: bounded set-ups, deadline-aware, never leaks a session opened too late.
 * Every session goes through checkedDestinations first (the profile's allowed_networks); when a
 * name resolved to several addresses, the next is tried only when one refuses the connection.
 * `onIdentity` hears what each session opened saw of the device's identity (the SSH host key of
 * SSH-based sessions, the TLS certificate of gNMI over TLS).
 */
export function sessionOpener(
  deps: OpenDeps,
  target: DeviceTarget,
  signal: AbortSignal,
  log: JobContext['log'],
  onIdentity?: (seen: DeviceIdentity) => void,
): JobContext['open'] {
  const openOne = (driver: DeviceDriver, destination: DeviceTarget, transcript: Transcript | undefined) => {
    const opening = driver.open(destination, deps.limits, transcript);
    return new Promise<DeviceSession>((resolve, reject) => {
      const onAbort = () => {
        reject(new DriverError('timeout', 'the job deadline passed while connecting'));
        opening.then(
          (s) => s.close(),
          () => undefined,
        );
      };
      signal.addEventListener('abort', onAbort, { once: true });
      opening.then(
        (s) => {
          signal.removeEventListener('abort', onAbort);
          resolve(s);
        },
        (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  };
  return async (transport, transcript) => {
    const driver = deps.drivers.get(transport);
    if (!driver) throw new DriverError('protocol', `this agent has no ${transport} driver`);
    const destinations = await checkedDestinations(target);
    await deps.connectSlots.acquire();
    let session: DeviceSession | undefined;
    try {
      for (const [i, destination] of destinations.entries()) {
        if (signal.aborted) throw new DriverError('timeout', 'the job deadline passed before the session was opened');
        const port = target.ports[transport];
        const where = destination.tls_server_name ? `${destination.tls_server_name} (${destination.host})` : destination.host;
        log('info', `connecting to ${where}:${port} over ${transport}`);
        try {
          session = await openOne(driver, destination, transcript);
          break;
        } catch (err) {
          if (!(err instanceof DriverError && err.kind === 'refused' && i < destinations.length - 1)) throw err;
          log('warn', `${err.message}; trying the next address of ${target.host}`);
        }
      }
    } finally {
      deps.connectSlots.release();
    }
    const opened = session;
    if (!opened) throw new DriverError('refused', `${target.host}: no address to connect to`);
    // No "connected" line: the job's next line (or its error) says the session is up; a deployment
    // stores every line of every device, and two lines per connection cost as much as the rest.
    if (opened.hostKey || opened.gnmiCert) onIdentity?.({ hostKey: opened.hostKey, gnmiCert: opened.gnmiCert });
    // At the deadline the session is closed, which ends whatever command is running.
    signal.addEventListener('abort', () => void opened.close().catch(() => undefined), { once: true });
    return opened;
  };
}

/** An error in words for the job result, with its cause class when a driver raised it. */
export function describeError(err: unknown, signal: AbortSignal): { message: string; cause?: string } {
  if (signal.aborted) return { message: `the job deadline passed (${(err as Error)?.message ?? String(err)})`, cause: 'timeout' };
  if (err instanceof DriverError) return { message: err.message, cause: err.kind };
  return { message: (err as Error)?.message ?? String(err) };
}
