/**
 * gNMI driver: Capabilities, Get (JSON_IETF) and Set over grpc-js, with username/password
 * metadata, TLS (optionally accepting any server certificate) or plaintext, per-RPC deadlines
 * and keepalive from the session limits. All changes of one apply() go in ONE SetRequest, which
 * the target applies all-or-nothing. Over TLS the server certificate is pinned (trust on first
 * use, ./tls-pin.ts): checked on every TLS session before any RPC carries the credentials.
 */
import { isIPv4, isIPv6 } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_ANSWER_BYTES,
  DriverError,
  mayHaveGoneIn,
  type ConfigChange,
  type ConfigPreview,
  type DeviceDriver,
  type DeviceSession,
  type DeviceTarget,
  type FetchedConfig,
  type GnmiCert,
  type SessionLimits,
  type Transcript,
} from '../types';
import { canonicalJson, deleteAt, getUnique, setAt, TreeError, type Json } from './json-tree';
import { wholeConfigRoot } from '../../../../shared/src/device/config-roots';
import { formatPath, parsePath, PathSyntaxError, type GnmiPath, type PathElem } from './path';
import { gnmiService } from './proto';
import { maskSecrets } from '../netconf/client';
import { certPin, type CertPin } from './tls-pin';

/** Wire shapes (proto-loader with keepCase, enums as strings, oneofs). */
export interface ProtoPath {
  origin?: string;
  elem: { name: string; key: Record<string, string> }[];
  target?: string;
}
export interface ProtoTypedValue {
  value?: string;
  json_ietf_val?: Buffer;
  json_val?: Buffer;
  string_val?: string;
  int_val?: string;
  uint_val?: string;
  bool_val?: boolean;
  double_val?: number;
  float_val?: number;
  ascii_val?: string;
  bytes_val?: Buffer;
  leaflist_val?: { element: ProtoTypedValue[] };
}
export interface ProtoUpdate {
  path: ProtoPath;
  val: ProtoTypedValue;
}
export interface ProtoNotification {
  timestamp?: string;
  prefix?: ProtoPath | null;
  update: ProtoUpdate[];
  delete: ProtoPath[];
}
export interface CapabilityResponse {
  supported_models: { name: string; organization: string; version: string }[];
  supported_encodings: string[];
  gNMI_version: string;
}
export interface SetRequest {
  prefix?: ProtoPath;
  delete: ProtoPath[];
  replace: ProtoUpdate[];
  update: ProtoUpdate[];
}

export function toProtoPath(p: GnmiPath): ProtoPath {
  return { ...(p.origin ? { origin: p.origin } : {}), elem: p.elem.map((e) => ({ name: e.name, key: { ...e.key } })) };
}

export function fromProtoPath(p: ProtoPath | null | undefined): PathElem[] {
  return (p?.elem ?? []).map((e) => ({ name: e.name, key: { ...(e.key ?? {}) } }));
}

/** A TypedValue as JSON. */
export function decodeTypedValue(v: ProtoTypedValue): Json {
  switch (v.value) {
    case 'json_ietf_val':
    case 'json_val': {
      const buf = v[v.value];
      const text = buf ? buf.toString('utf8') : '';
      return text.trim() === '' ? null : (JSON.parse(text) as Json);
    }
    case 'string_val':
    case 'ascii_val':
      return v[v.value] ?? '';
    case 'int_val':
    case 'uint_val': {
      const n = Number(v[v.value]);
      return Number.isSafeInteger(n) ? n : String(v[v.value]);
    }
    case 'bool_val':
      return Boolean(v.bool_val);
    case 'double_val':
    case 'float_val':
      return Number(v[v.value]);
    case 'bytes_val':
      return (v.bytes_val ?? Buffer.alloc(0)).toString('base64');
    case 'leaflist_val':
      return (v.leaflist_val?.element ?? []).map(decodeTypedValue);
    default:
      return null;
  }
}

/** Map a gRPC failure to a DriverError an operator can act on. */
export function grpcError(err: grpc.ServiceError, what: string, where: string, timeoutMs: number): DriverError {
  const detail = (err.details || err.message).replace(/\s+/g, ' ').trim();
  switch (err.code) {
    case grpc.status.UNAUTHENTICATED:
      return new DriverError('auth', `${what} on ${where}: authentication failed (${detail})`);
    case grpc.status.PERMISSION_DENIED:
      return new DriverError('auth', `${what} on ${where}: permission denied (${detail})`);
    case grpc.status.DEADLINE_EXCEEDED:
      return new DriverError('timeout', `${what} on ${where} timed out after ${timeoutMs}ms`);
    case grpc.status.UNAVAILABLE: {
      if (/certificate|self[- ]signed|unable to verify|CERT_/i.test(detail)) {
        return new DriverError(
          'auth',
          `${what} on ${where}: server TLS certificate not trusted (${detail}); trust its CA on the agent (NODE_EXTRA_CA_CERTS) or set ` +
            `gnmi_skip_verify to accept it; or give the connection profile the CA as ca_certificate`,
        );
      }
      if (/SSL|TLS|handshake|wrong version|protocol/i.test(detail)) {
        return new DriverError('protocol', `${what} on ${where}: TLS/HTTP2 negotiation failed (${detail}); check gnmi_tls`);
      }
      return new DriverError('refused', `${what} on ${where}: target unavailable (${detail})`);
    }
    default: {
      const name = grpc.status[err.code] ?? String(err.code);
      return new DriverError('device', `${what} on ${where} failed: ${name}: ${detail}`);
    }
  }
}

function changeLabel(c: ConfigChange, i: number): string {
  return `change ${i + 1}${c.target_path ? ` (${c.target_path})` : ''}`;
}

/**
 * The path of one change. A replace or delete must name its subtree: with no target_path, or the
 * root ("/", "origin:/"), it would replace or delete the device's whole configuration. The
 * controller refuses both before a job is sent; this is the agent's own check (a restore of a
 * backup replaces the root through restore(), not through a change).
 */
function parseTargetPath(c: ConfigChange, i: number): GnmiPath {
  const tp = c.target_path?.trim();
  if (!tp) {
    if (c.operation !== 'merge') throw new DriverError('device', `${changeLabel(c, i)}: gNMI ${c.operation} needs a target_path`);
    return { elem: [] };
  }
  let path: GnmiPath;
  try {
    path = parsePath(tp);
  } catch (err) {
    throw new DriverError('device', `${changeLabel(c, i)}: ${err instanceof PathSyntaxError ? err.message : String(err)}`);
  }
  const platform = c.operation !== 'merge' ? wholeConfigRoot(tp) : null;
  if (platform) {
    throw new DriverError(
      'device',
      `${changeLabel(c, i)}: gNMI ${c.operation} of ${tp} would ${c.operation} the whole ${platform} configuration; target_path must name a subtree`,
    );
  }
  if (c.operation !== 'merge' && path.elem.length === 0) {
    throw new DriverError(
      'device',
      `${changeLabel(c, i)}: gNMI ${c.operation} of the root would ${c.operation} the whole configuration; target_path must name a subtree`,
    );
  }
  return path;
}

function jsonValue(text: string, label: string): Buffer {
  try {
    JSON.parse(text);
  } catch (err) {
    throw new DriverError('device', `${label}: config is not valid JSON: ${(err as Error).message}`);
  }
  return Buffer.from(text, 'utf8');
}

/** One SetRequest for all changes: deletes, replaces and updates in the order given. */
export function buildSetRequest(changes: ConfigChange[]): SetRequest {
  const req: SetRequest = { delete: [], replace: [], update: [] };
  changes.forEach((c, i) => {
    const path = toProtoPath(parseTargetPath(c, i));
    if (c.operation === 'delete') {
      req.delete.push(path);
      return;
    }
    if (c.config_format !== 'json') throw new DriverError('device', `${changeLabel(c, i)}: gNMI takes JSON config, got ${c.config_format}`);
    const update: ProtoUpdate = { path, val: { json_ietf_val: jsonValue(c.config, changeLabel(c, i)) } };
    (c.operation === 'replace' ? req.replace : req.update).push(update);
  });
  return req;
}

/**
 * The paths of a restore's scope, each looked up in the backup (a Get of `/` in the default
 * origin): a path of another origin is not in it, and an element the backup names twice is
 * not guessed at. Throws DriverError saying which.
 */
function scopeInBackup(backup: Json, scope: string[]): { path: GnmiPath; value: Json | undefined }[] {
  return scope.map((text, i) => {
    const path = parseTargetPath({ target_path: text, operation: 'replace', config_format: 'json', config: '' }, i);
    if (path.origin && path.origin !== 'openconfig') {
      throw new DriverError(
        'device',
        `restore of ${text}: the backup is a Get of / in the default origin and holds nothing of origin ${path.origin}`,
      );
    }
    try {
      return { path, value: getUnique(backup, path.elem) };
    } catch (err) {
      if (!(err instanceof TreeError)) throw err;
      throw new DriverError('device', `restore of ${text}: ${err.message}`);
    }
  });
}

/**
 * The SetRequest that puts `backup` back at each path of `scope` only (restore()): the backup's
 * value replaces the path, and a path the backup lacks is deleted, that path only (never an
 * ancestor, which may hold what the Get did not return).
 */
function scopedRestore(backup: Json, scope: string[]): SetRequest {
  const req: SetRequest = { delete: [], replace: [], update: [] };
  for (const { path, value } of scopeInBackup(backup, scope)) {
    if (value === undefined) req.delete.push(toProtoPath(path));
    else req.replace.push({ path: toProtoPath(path), val: { json_ietf_val: Buffer.from(JSON.stringify(value), 'utf8') } });
  }
  return req;
}

/** Bytes of one value shown in the transcript (which keeps 1 MiB in all). */
const TRANSCRIBED_BYTES = 64 * 1024;

/**
 * Buffers as (the start of) their text. Converted before JSON.stringify: its Buffer.toJSON would
 * first build an array of one number per byte, eight times the size of what the device sent.
 */
function transcribable(v: unknown): unknown {
  if (Buffer.isBuffer(v)) {
    const text = v.subarray(0, TRANSCRIBED_BYTES).toString('utf8');
    return v.length > TRANSCRIBED_BYTES ? `${text}… (${v.length} bytes)` : text;
  }
  if (Array.isArray(v)) return v.map(transcribable);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, transcribable(x)]));
  return v;
}

function forTranscript(value: unknown): string {
  return JSON.stringify(transcribable(value));
}

type Unary = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

export class GnmiSession implements DeviceSession {
  readonly transport = 'gnmi' as const;
  capabilities: CapabilityResponse = { supported_models: [], supported_encodings: [], gNMI_version: '' };

  constructor(
    private readonly client: grpc.Client,
    private readonly where: string,
    private readonly credentials: { username: string; password?: string },
    private readonly limits: SessionLimits,
    private readonly transcript?: Transcript,
    private readonly pin?: CertPin,
  ) {}

  /** The server's TLS certificate (first TLS session); undefined over plaintext. */
  get gnmiCert(): GnmiCert | undefined {
    return this.pin?.seen;
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set('username', this.credentials.username);
    if (this.credentials.password !== undefined) md.set('password', this.credentials.password);
    return md;
  }

  /** One unary RPC with a deadline; failures become DriverErrors. */
  /** A Set the target may work on for minutes (a large change, a commit behind it): SessionLimits.commitTimeoutMs. */
  private get setTimeoutMs(): number {
    return Math.max(this.limits.commitTimeoutMs, this.limits.commandTimeoutMs);
  }

  call<T>(method: 'Capabilities' | 'Get' | 'Set', req: unknown, timeoutMs = this.limits.commandTimeoutMs, label: string = method): Promise<T> {
    const fn = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    const secrets = [this.credentials.password ?? ''];
    this.transcript?.write('sent', maskSecrets(`${method} ${forTranscript(req)}`, secrets));
    return new Promise<T>((resolve, reject) => {
      fn(req, this.metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err) {
          // A certificate that is not the pinned one failed the connection before the RPC was sent.
          const e = this.pin?.mismatch ?? grpcError(err, `gNMI ${label}`, this.where, timeoutMs);
          this.transcript?.write('info', e.message);
          reject(e);
          return;
        }
        // grpc-js calls this outside any promise: a throw here would end the process and leave the call pending.
        try {
          this.transcript?.write('received', maskSecrets(`${method} ${forTranscript(res)}`, secrets));
        } catch (e) {
          reject(new DriverError('protocol', `gNMI ${label} on ${this.where}: unreadable answer (${(e as Error).message})`));
          return;
        }
        resolve(res as T);
      });
    });
  }

  private get encoding(): 'JSON_IETF' | 'JSON' {
    const enc = this.capabilities.supported_encodings;
    return enc.length === 0 || enc.includes('JSON_IETF') || !enc.includes('JSON') ? 'JSON_IETF' : 'JSON';
  }

  /** Get one path (string form) as a JSON tree assembled from every returned update. */
  async get(path = '/', type: 'ALL' | 'CONFIG' | 'STATE' | 'OPERATIONAL' = 'CONFIG'): Promise<Json> {
    const p = parsePath(path);
    const res = await this.call<{ notification: ProtoNotification[] }>(
      'Get',
      { path: [toProtoPath(p)], type, encoding: this.encoding },
      undefined,
      `Get ${formatPath(p)}`,
    );
    let tree: Json = {};
    let found = false;
    for (const n of res.notification ?? []) {
      const prefix = fromProtoPath(n.prefix);
      for (const u of n.update ?? []) {
        let value: Json;
        try {
          value = decodeTypedValue(u.val ?? {});
        } catch (err) {
          throw new DriverError('protocol', `gNMI Get on ${this.where} returned a value that is not valid JSON: ${(err as Error).message}`);
        }
        const at = [...prefix, ...fromProtoPath(u.path)];
        // Updates come back at absolute paths; strip the requested path to make them relative.
        const rel = at.slice(Math.min(p.elem.length, at.length));
        try {
          tree = rel.length === 0 && !found ? value : setAt(tree, rel, value, 'update');
        } catch (err) {
          if (!(err instanceof TreeError)) throw err;
          throw new DriverError('protocol', `gNMI Get on ${this.where} returned updates that do not fit together: ${err.message}`);
        }
        found = true;
      }
    }
    return tree;
  }

  async fetchConfig(): Promise<FetchedConfig> {
    return { text: canonicalJson(await this.get('/', 'CONFIG')), format: 'json', via: 'gnmi' };
  }

  async apply(changes: ConfigChange[]): Promise<void> {
    if (changes.length === 0) return;
    const req = buildSetRequest(changes);
    await this.call('Set', req, this.setTimeoutMs, `Set (${changes.length} change(s))`).catch((err: unknown) => {
      // A target applies a Set all or nothing, and says so; a Set whose answer never came (a
      // timeout, a dropped connection) may have gone in, so the push is undone (partial).
      if (err instanceof DriverError && (err.kind === 'timeout' || err.kind === 'refused' || err.kind === 'protocol')) {
        throw mayHaveGoneIn(err);
      }
      throw err;
    });
  }

  /**
   * Dry run without touching the device: Get the config, then apply the SetRequest to that JSON
   * as the target would (deletes, then replaces, then updates, RFC-like gNMI Set semantics).
   */
  async preview(changes: ConfigChange[]): Promise<ConfigPreview> {
    const current = await this.get('/', 'CONFIG');
    let tree: Json = structuredClone(current);
    const paths = changes.map((c, i) => parseTargetPath(c, i).elem);
    for (const op of ['delete', 'replace', 'merge'] as const) {
      changes.forEach((c, i) => {
        if (c.operation !== op) return;
        if (op === 'delete') tree = deleteAt(tree, paths[i]);
        else
          tree = setAt(
            tree,
            paths[i],
            JSON.parse(jsonValue(c.config, changeLabel(c, i)).toString('utf8')) as Json,
            op === 'replace' ? 'replace' : 'update',
          );
      });
    }
    return { before: canonicalJson(current), after: canonicalJson(tree) };
  }

  /**
   * The backup back as one SetRequest: with a scope, each subtree the deployment changed is
   * replaced by the backup's (or deleted where the backup has none) and nothing else is sent, so
   * what the Get of `/` did not return (a target's configuration outside the default origin's
   * models) is left as it is; without one, `/` is replaced by the whole backup.
   */
  async restore(config: FetchedConfig, scope?: string[]): Promise<void> {
    if (config.format !== 'json') {
      throw new DriverError('device', `cannot restore a ${config.format} configuration over gNMI (needs the JSON fetched via gnmi)`);
    }
    const value = jsonValue(config.text, 'restore');
    const req = scope ? scopedRestore(JSON.parse(value.toString('utf8')) as Json, scope) : undefined;
    await this.call(
      'Set',
      req ?? { delete: [], replace: [{ path: { elem: [] }, val: { json_ietf_val: value } }], update: [] },
      this.setTimeoutMs,
      req ? `Set (restore of ${scope!.join(', ')})` : 'Set replace / (restore)',
    );
  }

  /** Whether `running` holds the backup's value at each path of the scope (what restore() put back). */
  restored(running: FetchedConfig, backup: FetchedConfig, scope: string[]): boolean {
    const now = scopeInBackup(JSON.parse(running.text) as Json, scope);
    return scopeInBackup(JSON.parse(backup.text) as Json, scope).every(
      ({ value }, i) => (value === undefined ? '' : canonicalJson(value)) === (now[i].value === undefined ? '' : canonicalJson(now[i].value!)),
    );
  }

  async close(): Promise<void> {
    this.client.close();
  }
}

/** The DeviceDriver for 'gnmi'; open() gives the richer session (capabilities, get). */
export interface GnmiDriver extends DeviceDriver {
  open(target: DeviceTarget, limits?: Partial<SessionLimits>, transcript?: Transcript): Promise<GnmiSession>;
}

/**
 * The grpc-js target of a session: an IP literal with its own scheme (`ipv4:`/`ipv6:`), a name
 * through DNS. grpc-js's DNS resolver builds a c-ares channel even for an IP literal, about a
 * tenth of a millisecond of CPU per session, for every session of a fleet of addresses.
 */
export function channelAddress(host: string, port: number): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv4(bare)) return `ipv4:${bare}:${port}`;
  if (isIPv6(bare)) return `ipv6:[${bare}]:${port}`;
  return `${host}:${port}`;
}

export interface GnmiDriverOptions {
  /** Largest answer taken from a device (default DEFAULT_MAX_ANSWER_BYTES). */
  maxMessageBytes?: number;
}

export function createGnmiDriver(options: GnmiDriverOptions = {}): GnmiDriver {
  return {
    transport: 'gnmi',
    async open(target, limits, transcript) {
      const l: SessionLimits = { ...DEFAULT_LIMITS, ...limits };
      const host = target.host.includes(':') && !target.host.startsWith('[') ? `[${target.host}]` : target.host;
      const where = `${host}:${target.ports.gnmi}`;
      let creds: grpc.ChannelCredentials;
      let pin: CertPin | undefined;
      if (target.gnmi_tls) {
        pin = certPin(target.name, where, target.gnmi_cert_sha256);
        creds = pin.wrap(
          target.gnmi_skip_verify
            ? grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined })
            : grpc.credentials.createSsl(target.ca_certificate ? Buffer.from(target.ca_certificate) : null),
        );
      } else {
        creds = grpc.credentials.createInsecure();
      }
      const Ctor = gnmiService();
      const client = new Ctor(channelAddress(target.host, target.ports.gnmi), creds, {
        'grpc.keepalive_time_ms': l.keepaliveIntervalMs,
        'grpc.keepalive_timeout_ms': Math.max(1000, Math.min(l.idleTimeoutMs, 20_000)),
        // Ping only while RPCs are in flight: targets commonly punish idle pings (GOAWAY).
        'grpc.keepalive_permit_without_calls': 0,
        'grpc.max_receive_message_length': options.maxMessageBytes ?? DEFAULT_MAX_ANSWER_BYTES,
        'grpc.max_send_message_length': 256 * 1024 * 1024,
        'grpc.enable_retries': 0,
        // A channel of its own per session: with grpc-js's process-wide pool every close walks the
        // subchannels of every target ever dialled (quadratic over a fleet), and channelz keeps a
        // registry entry per channel that nothing here reads.
        'grpc.use_local_subchannel_pool': 1,
        'grpc.enable_channelz': 0,
        // host is the address the agent resolved a name to and checked (jobs/context.ts): TLS still checks the name.
        ...(target.gnmi_tls &&
          target.tls_server_name && {
            'grpc.ssl_target_name_override': target.tls_server_name,
            'grpc.default_authority': `${target.tls_server_name}:${target.ports.gnmi}`,
          }),
      });
      transcript?.write(
        'info',
        `connecting to ${where} (gnmi, ${target.gnmi_tls ? (target.gnmi_skip_verify ? 'tls, any certificate' : 'tls') : 'plaintext'}) as ` +
          `${target.credentials.username}`,
      );
      const session = new GnmiSession(
        client,
        where,
        { username: target.credentials.username, password: target.credentials.password },
        l,
        transcript,
        pin,
      );
      try {
        // The first RPC carries TCP connect, TLS and authentication: it gets the connect limit.
        session.capabilities = await session.call<CapabilityResponse>('Capabilities', {}, l.connectTimeoutMs, 'Capabilities (connect)');
        if (pin?.seen) {
          transcript?.write(
            'info',
            `TLS certificate SHA-256 ${pin.seen.sha256} ` +
              `(${pin.seen.subject})${target.gnmi_cert_sha256 ? ' matches the pinned certificate' : ', none pinned yet'}`,
          );
        }
      } catch (err) {
        client.close();
        throw err;
      }
      return session;
    },
  };
}

export const gnmiDriver: GnmiDriver = createGnmiDriver();
