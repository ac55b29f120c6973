/**
 * Simulated gNMI target: a grpc-js server for the gNMI service over a JSON (JSON_IETF) tree.
 * Capabilities, Get (any path), Set (delete/replace/update, all-or-nothing per SetRequest),
 * Subscribe ONCE, username/password metadata auth, optional TLS with a self-signed certificate
 * made on the fly, and failure injection.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { gnmiService } from '../../../agent/src/drivers/gnmi/proto';
import { decodeTypedValue, fromProtoPath, type ProtoNotification, type ProtoPath, type ProtoUpdate } from '../../../agent/src/drivers/gnmi/driver';
import { deleteAt, getAt, setAt, TreeError, type Json } from '../../../agent/src/drivers/gnmi/json-tree';
import { formatPath, type PathElem } from '../../../agent/src/drivers/gnmi/path';

export interface GnmiFaults {
  /** The Nth Set request (1-based, counted over the target's life) fails. */
  failNthSet?: number;
  /** Any Set whose delete/replace/update paths overlap one of these paths ("/a/b[k=v]") fails. */
  failSetPaths?: string[];
  /** gRPC status for injected Set failures (default ABORTED). */
  failCode?: grpc.status;
  /** Delay before answering any RPC. */
  delayMs?: number;
  /** The Nth Set request (1-based) is applied but never answered: its reply lost. */
  silentNthSet?: number;
  /** The Nth Set request (1-based) is answered as done but changes nothing (a target that acknowledges an edit it then does not apply). */
  ignoredNthSet?: number;
  /**
   * Get answers with no notification whatever the tree holds, as a target does that serves its
   * config only under an origin or named paths: a config read that finds nothing.
   */
  emptyGet?: boolean;
}

/** What a handler answers for a request the target takes but never replies to. */
const NO_ANSWER = Symbol('no answer');

export interface GnmiTargetOptions {
  username?: string;
  password?: string;
  tls?: boolean;
  /** TLS key and certificate (default: one self-signed certificate shared by the process). */
  cert?: Cert;
  /** Listen on this port (default: any free one), e.g. to stand in for another target. */
  port?: number;
  /** Listen on this loopback address (default 127.0.0.1): a fleet on one port, a device per address, as real networks are. */
  host?: string;
  initialTree?: Json;
  models?: { name: string; organization: string; version: string }[];
  faults?: GnmiFaults;
}

export interface GnmiTarget {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** PEM certificate when tls is on. */
  readonly certPem?: string;
  /** RPCs that reached the handlers (their metadata carried the credentials), in order. */
  readonly rpcs: string[];
  /** Mutable between calls. */
  faults: GnmiFaults;
  tree(): Json;
  setTree(tree: Json): void;
  /** Every SetRequest received (successful or not), decoded. */
  readonly setRequests: { delete: string[]; replace: string[]; update: string[] }[];
  close(): Promise<void>;
}

export interface Cert {
  key: string;
  cert: string;
}
let cachedCert: Cert | undefined;

/** A self-signed certificate for localhost / 127.0.0.1, made once per process with openssl. */
export function selfSignedCert(): Cert {
  cachedCert ??= newSelfSignedCert();
  return cachedCert;
}

/** openssl's arguments for a new P-256 key, and for a name devices on loopback answer to. */
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const LOOPBACK_SAN = 'DNS:localhost,IP:127.0.0.1';
const LOOPBACK_NAMES = ['-addext', `subjectAltName=${LOOPBACK_SAN}`];

/** Runs openssl commands in a temporary directory (removed afterwards) and reads files back from it. */
function withOpenssl<T>(files: Record<string, string>, work: (openssl: (...args: string[]) => void, read: (name: string) => string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'sb-gnmi-cert-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
    return work(
      (...args) => void execFileSync('openssl', args, { stdio: 'pipe', cwd: dir }),
      (name) => readFileSync(join(dir, name), 'utf8'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A new self-signed certificate for localhost / 127.0.0.1, made with openssl. */
export function newSelfSignedCert(cn = 'localhost'): Cert {
  return withOpenssl({}, (openssl, read) => {
    openssl('req', '-x509', ...EC_KEY, '-days', '2', '-subj', `/CN=${cn}`, ...LOOPBACK_NAMES, '-keyout', 'key.pem', '-out', 'cert.pem');
    return { key: read('key.pem'), cert: read('cert.pem') };
  });
}

/** A certificate authority made with openssl, able to issue certificates for localhost / 127.0.0.1. */
export interface TestCa {
  /** The CA certificate (PEM), for the trust store of whoever should trust it. */
  cert: string;
  /** A certificate for `cn`, valid for localhost and 127.0.0.1 unless subjectAltName says otherwise (e.g. 'DNS:localhost'). */
  issue(cn: string, subjectAltName?: string): Cert;
}

export function newCertificateAuthority(cn = 'Switchboard Test CA'): TestCa {
  const ca = withOpenssl({}, (openssl, read) => {
    openssl(
      'req',
      '-x509',
      ...EC_KEY,
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    );
    return { cert: read('ca.pem'), key: read('ca.key') };
  });
  return {
    cert: ca.cert,
    issue: (name, subjectAltName = LOOPBACK_SAN) =>
      withOpenssl({ 'ca.pem': ca.cert, 'ca.key': ca.key }, (openssl, read) => {
        openssl(
          'req',
          '-new',
          ...EC_KEY,
          '-subj',
          `/CN=${name}`,
          '-addext',
          `subjectAltName=${subjectAltName}`,
          '-keyout',
          'key.pem',
          '-out',
          'req.csr',
        );
        openssl(
          'x509',
          '-req',
          '-in',
          'req.csr',
          '-CA',
          'ca.pem',
          '-CAkey',
          'ca.key',
          '-CAcreateserial',
          '-days',
          '2',
          '-copy_extensions',
          'copy',
          '-out',
          'cert.pem',
        );
        return { key: read('key.pem'), cert: read('cert.pem') };
      }),
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function statusError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

function overlaps(a: string, b: string): boolean {
  const norm = (s: string): string => (s.endsWith('/') ? s : s + '/');
  return norm(a).startsWith(norm(b)) || norm(b).startsWith(norm(a));
}

interface SetReq {
  prefix?: ProtoPath | null;
  delete?: ProtoPath[];
  replace?: ProtoUpdate[];
  update?: ProtoUpdate[];
  union_replace?: ProtoUpdate[];
}

export async function startGnmiTarget(options: GnmiTargetOptions = {}): Promise<GnmiTarget> {
  const username = options.username ?? 'admin';
  const password = options.password ?? 'admin';
  const tls = options.tls ?? false;
  const cert = tls ? (options.cert ?? selfSignedCert()) : undefined;
  const rpcs: string[] = [];
  let data: Json = structuredClone(options.initialTree ?? {});
  let setCount = 0;
  const setRequests: GnmiTarget['setRequests'] = [];
  const models = options.models ?? [
    { name: 'openconfig-interfaces', organization: 'OpenConfig working group', version: '3.0.0' },
    { name: 'openconfig-system', organization: 'OpenConfig working group', version: '1.0.0' },
  ];
  const target = {
    host: options.host ?? '127.0.0.1',
    port: 0,
    tls,
    certPem: cert?.cert,
    rpcs,
    faults: { ...options.faults },
    tree: () => structuredClone(data),
    setTree: (t: Json) => {
      data = structuredClone(t);
    },
    setRequests,
    close: async () => server.forceShutdown(),
  } satisfies GnmiTarget;

  const authorize = (md: grpc.Metadata, method: string): grpc.ServiceError | undefined => {
    rpcs.push(method);
    const u = md.get('username')[0];
    const p = md.get('password')[0];
    if (typeof u !== 'string' || typeof p !== 'string' || !safeEqual(u, username) || !safeEqual(p, password)) {
      return statusError(grpc.status.UNAUTHENTICATED, 'invalid username or password');
    }
    return undefined;
  };

  /** Common wrapper: delay, auth, then the handler; thrown ServiceErrors become the status. */
  function unary<Req, Res>(handler: (req: Req) => Res | typeof NO_ANSWER): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      const run = (): void => {
        if (call.cancelled) return;
        const denied = authorize(call.metadata, call.getPath());
        if (denied) return callback(denied);
        try {
          const res = handler(call.request);
          if (res !== NO_ANSWER) callback(null, res);
        } catch (err) {
          if ((err as grpc.ServiceError).code !== undefined) return callback(err as grpc.ServiceError);
          callback(statusError(grpc.status.INTERNAL, String(err)));
        }
      };
      const delay = target.faults.delayMs ?? 0;
      if (delay > 0) setTimeout(run, delay);
      else run();
    };
  }

  const join2 = (prefix: ProtoPath | null | undefined, p: ProtoPath | null | undefined): PathElem[] => [
    ...fromProtoPath(prefix),
    ...fromProtoPath(p),
  ];

  const handlers = {
    Capabilities: unary(() => ({ supported_models: models, supported_encodings: ['JSON', 'JSON_IETF'], gNMI_version: '0.10.0', extension: [] })),

    Get: unary((req: { prefix?: ProtoPath | null; path?: ProtoPath[]; encoding?: string }) => {
      if (req.encoding !== 'JSON_IETF' && req.encoding !== 'JSON') {
        throw statusError(grpc.status.UNIMPLEMENTED, `encoding ${req.encoding} not supported; use JSON_IETF or JSON`);
      }
      if (target.faults.emptyGet) return { notification: [] };
      const paths = req.path && req.path.length > 0 ? req.path : [{ elem: [] }];
      const field = req.encoding === 'JSON' ? 'json_val' : 'json_ietf_val';
      const notification: ProtoNotification[] = paths.map((p) => {
        const elems = join2(req.prefix, p);
        const value = getAt(data, elems);
        if (value === undefined) throw statusError(grpc.status.NOT_FOUND, `path ${formatPath({ elem: elems })} not found`);
        return {
          timestamp: String(BigInt(Date.now()) * 1_000_000n),
          prefix: req.prefix ?? null,
          update: [{ path: p, val: { [field]: Buffer.from(JSON.stringify(value)) } }],
          delete: [],
        };
      });
      return { notification };
    }),

    Set: unary((req: SetReq) => {
      setCount++;
      const fmt = (p: ProtoPath | null | undefined): string => formatPath({ elem: join2(req.prefix, p) });
      const ops = {
        delete: (req.delete ?? []).map(fmt),
        replace: [...(req.replace ?? []), ...(req.union_replace ?? [])].map((u) => fmt(u.path)),
        update: (req.update ?? []).map((u) => fmt(u.path)),
      };
      setRequests.push(ops);
      const f = target.faults;
      const failCode = f.failCode ?? grpc.status.ABORTED;
      if (f.failNthSet !== undefined && f.failNthSet === setCount) throw statusError(failCode, `injected failure of Set #${setCount}`);
      const touched = [...ops.delete, ...ops.replace, ...ops.update];
      const hit = (f.failSetPaths ?? []).find((fp) => touched.some((t) => overlaps(t, fp)));
      if (hit) throw statusError(failCode, `injected failure: Set touches ${hit}`);

      // All-or-nothing: work on a copy and keep it only if every operation succeeds.
      let next = structuredClone(data);
      const response: { path: ProtoPath; op: string }[] = [];
      try {
        for (const p of req.delete ?? []) {
          next = deleteAt(next, join2(req.prefix, p));
          response.push({ path: p, op: 'DELETE' });
        }
        const apply = (u: ProtoUpdate, mode: 'replace' | 'update', op: string): void => {
          let value: Json;
          try {
            value = decodeTypedValue(u.val ?? {});
          } catch (err) {
            throw statusError(grpc.status.INVALID_ARGUMENT, `value for ${fmt(u.path)} is not valid JSON: ${(err as Error).message}`);
          }
          next = setAt(next, join2(req.prefix, u.path), value, mode);
          response.push({ path: u.path, op });
        };
        for (const u of req.replace ?? []) apply(u, 'replace', 'REPLACE');
        for (const u of req.update ?? []) apply(u, 'update', 'UPDATE');
        for (const u of req.union_replace ?? []) apply(u, 'replace', 'UNION_REPLACE');
      } catch (err) {
        if (err instanceof TreeError) throw statusError(grpc.status.INVALID_ARGUMENT, err.message);
        throw err;
      }
      if (f.ignoredNthSet !== setCount) data = next;
      if (f.silentNthSet === setCount) return NO_ANSWER;
      return { prefix: req.prefix ?? null, response, timestamp: String(BigInt(Date.now()) * 1_000_000n), extension: [] };
    }),

    Subscribe: (
      call: grpc.ServerDuplexStream<{ subscribe?: { prefix?: ProtoPath; subscription?: { path: ProtoPath }[]; mode?: string } }, unknown>,
    ) => {
      const denied = authorize(call.metadata, call.getPath());
      if (denied) {
        call.emit('error', denied);
        return;
      }
      call.once('data', (req) => {
        const list = req.subscribe;
        if (!list || list.mode !== 'ONCE') {
          call.emit('error', statusError(grpc.status.UNIMPLEMENTED, 'only ONCE subscriptions are simulated'));
          return;
        }
        for (const s of list.subscription ?? []) {
          const value = getAt(data, join2(list.prefix, s.path));
          if (value === undefined) continue;
          call.write({
            update: {
              timestamp: String(BigInt(Date.now()) * 1_000_000n),
              prefix: list.prefix ?? null,
              update: [{ path: s.path, val: { json_ietf_val: Buffer.from(JSON.stringify(value)) } }],
              delete: [],
            },
          });
        }
        call.write({ sync_response: true });
        call.end();
      });
    },
  };

  const server = new grpc.Server();
  server.addService(gnmiService().service, handlers as unknown as grpc.UntypedServiceImplementation);
  const creds = tls
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(cert!.key), cert_chain: Buffer.from(cert!.cert) }], false)
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${target.host}:${options.port ?? 0}`, creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  (target as { port: number }).port = port;
  return target;
}

export interface GnmiFleet {
  targets: GnmiTarget[];
  close(): Promise<void>;
}

export async function startGnmiFleet(n: number, options: GnmiTargetOptions | ((i: number) => GnmiTargetOptions) = {}): Promise<GnmiFleet> {
  const targets: GnmiTarget[] = [];
  for (let i = 0; i < n; i += 50) {
    targets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) => startGnmiTarget(typeof options === 'function' ? options(i + j) : options)),
      )),
    );
  }
  return { targets, close: async () => void (await Promise.all(targets.map((t) => t.close()))) };
}
