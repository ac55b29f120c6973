/**
 * Simulated NETCONF device: an ssh2 server with the "netconf" subsystem (RFC 6242), base:1.0
 * and base:1.1 framing, running/candidate datastores, locks, (confirmed) commit, discard-changes,
 * rollback-on-error or stop-on-error edits, rpc-errors and injectable faults. Replies in chunked
 * mode are split into several chunks and written in small pieces so client framing bugs show up.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2, { type Connection, type ServerChannel } from 'ssh2';
import { CAP, NS_BASE, YUMA_MYSESSION } from '../../../agent/src/drivers/netconf/client';
import {
  XmlError,
  child,
  childrenNamed,
  elements,
  escapeAttr,
  escapeText,
  isElement,
  localName,
  parseXml,
  textOf,
  type XElement,
} from '../../../agent/src/drivers/netconf/xml';
import { Datastore, EditError } from './datastore';
import { readableKeyPair } from '../ssh/device';

const { Server, utils } = ssh2;

export interface NetconfFaults {
  /**
   * Never answer: 'hello' = send no hello; 'rpc' = answer no rpc; 'confirming-commit' = the commit
   * that would confirm a pending confirmed commit; any other operation name = that operation.
   */
  hang?: 'hello' | 'rpc' | string;
  /** Send bytes that are not NETCONF instead of the hello or of every rpc-reply. */
  garbage?: 'hello' | 'rpc';
  /** Every edit-config fails with operation-failed. */
  failOnEdit?: boolean;
  /**
   * An edit-config whose config contains this text is rejected (invalid-value, with error-path);
   * under stop-on-error, after the top-level subtrees before the one holding it went in.
   */
  rejectMarker?: string;
  /** Send only the first half of the reply to this operation, then go silent. */
  stallMidReply?: string;
  /** Every commit fails. */
  failCommit?: boolean;
  /**
   * Answer a session's first rpc only once another message arrives, as yuma123's netconfd does
   * when that rpc came in one read with the client's hello (see YUMA_MYSESSION in the client).
   */
  holdFirstRpc?: boolean;
  /** The connection drops when a confirming commit arrives (the pending confirmed commit reverts). */
  dropOnConfirmingCommit?: boolean;
  /** Answer this operation only after `ms`, silent meanwhile (a commit of a large configuration). */
  slowReply?: { op: string; ms: number };
}

export interface NetconfDeviceOptions {
  username?: string;
  password?: string;
  /** OpenSSH public keys accepted for publickey auth. */
  authorizedKeys?: string[];
  /** Advertise base:1.1 (default true). */
  base11?: boolean;
  /** Advertise :candidate (default true). */
  candidate?: boolean;
  /** Advertise :confirmed-commit:1.0 and 1.1 (default: same as candidate). */
  confirmedCommit?: boolean;
  /** Advertise :writable-running (default: !candidate). */
  writableRunning?: boolean;
  /**
   * Advertise :rollback-on-error (default true). An edit-config without that error-option is
   * stop-on-error either way: its top-level subtrees go in one by one, and a refused one keeps
   * those before it (RFC 6241 §7.2).
   */
  rollbackOnError?: boolean;
  /** Advertise yuma-mysession and answer its <get-my-session>, as yuma123's netconfd does. */
  yumaMySession?: boolean;
  /** Initial running config: an XML fragment. */
  initialConfig?: string;
  faults?: NetconfFaults;
  /** Largest chunk in base:1.1 replies (default 512 bytes: replies span several chunks). */
  maxChunk?: number;
  /** Write every framed reply in pieces of this many bytes (default 97; 0 = one write). */
  writeSplit?: number;
  /** Shared OpenSSH private host key (default: one ed25519 key per process). */
  hostKey?: string;
  /** Listen on this port (default: any free one) and address (default 127.0.0.1). */
  port?: number;
  host?: string;
}

export interface NetconfDevice {
  readonly host: string;
  readonly port: number;
  readonly capabilities: string[];
  /** Mutable: tests may change faults between sessions. */
  faults: NetconfFaults;
  running(): string;
  candidate(): string;
  /** Replace the running (and candidate) configuration from outside, as another operator would. */
  setRunning(xml: string): void;
  /** Operation names of every rpc received, in order (e.g. lock, edit-config, commit). */
  readonly rpcLog: string[];
  /** Number of NETCONF sessions currently open. */
  activeSessions(): number;
  /** Session id holding a lock on the datastore, or undefined. */
  lockHolder(ds: 'running' | 'candidate'): number | undefined;
  /** Whether a confirmed commit is waiting for its confirming commit. */
  confirmPending(): boolean;
  close(): Promise<void>;
}

let sharedHostKey: string | undefined;
function defaultHostKey(): string {
  sharedHostKey ??= readableKeyPair().private;
  return sharedHostKey;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Decodes client messages; written separately from the driver's decoder on purpose. */
class SimDeframer {
  chunked = false;
  private buf = Buffer.alloc(0);

  push(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
  }

  /** Next whole message, undefined if incomplete; throws on bad framing. */
  next(): string | undefined {
    if (!this.chunked) {
      const i = this.buf.indexOf(']]>]]>');
      if (i < 0) return undefined;
      const msg = this.buf.subarray(0, i).toString('utf8');
      this.buf = this.buf.subarray(i + 6);
      return msg;
    }
    const parts: Buffer[] = [];
    let pos = 0;
    for (;;) {
      if (this.buf.length < pos + 4) return undefined;
      if (this.buf[pos] !== 0x0a || this.buf[pos + 1] !== 0x23) throw new Error('bad chunk header');
      if (this.buf[pos + 2] === 0x23) {
        if (this.buf[pos + 3] !== 0x0a) throw new Error('bad end-of-chunks');
        if (parts.length === 0) throw new Error('empty message');
        pos += 4;
        break;
      }
      const nl = this.buf.indexOf(0x0a, pos + 2);
      if (nl < 0) {
        if (this.buf.length - pos > 13) throw new Error('chunk size too long');
        return undefined;
      }
      const digits = this.buf.subarray(pos + 2, nl).toString('latin1');
      if (!/^[1-9][0-9]{0,9}$/.test(digits)) throw new Error(`bad chunk size ${JSON.stringify(digits)}`);
      const size = Number(digits);
      if (this.buf.length < nl + 1 + size) return undefined;
      parts.push(this.buf.subarray(nl + 1, nl + 1 + size));
      pos = nl + 1 + size;
    }
    this.buf = this.buf.subarray(pos);
    return Buffer.concat(parts).toString('utf8');
  }
}

interface RpcErr {
  type?: string;
  tag: string;
  message: string;
  path?: string;
  info?: string;
}

function rpcErrorXml(e: RpcErr): string {
  return (
    `<rpc-error><error-type>${e.type ?? 'application'}</error-type><error-tag>${e.tag}</error-tag>` +
    `<error-severity>error</error-severity>${e.path ? `<error-path>${escapeText(e.path)}</error-path>` : ''}` +
    `<error-message xml:lang="en">${escapeText(e.message)}</error-message>${e.info ? `<error-info>${e.info}</error-info>` : ''}</rpc-error>`
  );
}

class Failure extends Error {
  constructor(readonly err: RpcErr) {
    super(err.message);
  }
}

export async function startNetconfDevice(options: NetconfDeviceOptions = {}): Promise<NetconfDevice> {
  const username = options.username ?? 'admin';
  const password = options.password ?? 'admin';
  const hasCandidate = options.candidate ?? true;
  const hasConfirmed = hasCandidate && (options.confirmedCommit ?? true);
  const hasWritableRunning = options.writableRunning ?? !hasCandidate;
  const hasRollbackOnError = options.rollbackOnError ?? true;
  const base11 = options.base11 ?? true;
  const maxChunk = options.maxChunk ?? 512;
  const writeSplit = options.writeSplit ?? 97;
  const capabilities = [
    CAP.base10,
    ...(base11 ? [CAP.base11] : []),
    ...(hasCandidate ? [CAP.candidate] : []),
    ...(hasConfirmed ? [CAP.confirmedCommit10, CAP.confirmedCommit11] : []),
    ...(hasWritableRunning ? [CAP.writableRunning] : []),
    ...(hasRollbackOnError ? [CAP.rollbackOnError] : []),
    'urn:ietf:params:netconf:capability:validate:1.1',
    'urn:switchboard:sim:netconf?module=switchboard-sim&revision=2024-01-01',
    ...(options.yumaMySession ? [`${YUMA_MYSESSION}?module=yuma-mysession&revision=2010-05-10`] : []),
  ];
  const authorized = (options.authorizedKeys ?? []).map((k) => utils.parseKey(k)).filter((k): k is ssh2.ParsedKey => !(k instanceof Error));

  let running = new Datastore(options.initialConfig ? parseXml(options.initialConfig) : []);
  let candidate = running.clone();
  const locks: { running?: number; candidate?: number } = {};
  let pending: { session: number; rollback: Datastore; timer: NodeJS.Timeout } | undefined;
  let nextSession = 1;
  const rpcLog: string[] = [];
  const sessions = new Map<number, () => void>();
  const connections = new Set<Connection>();

  const revertPending = (): void => {
    if (!pending) return;
    clearTimeout(pending.timer);
    running = pending.rollback;
    candidate = running.clone();
    pending = undefined;
  };

  const device: NetconfDevice = {
    host: '127.0.0.1',
    port: 0,
    capabilities,
    faults: { ...options.faults },
    running: () => running.text(),
    candidate: () => candidate.text(),
    setRunning: (xml: string) => {
      revertPending();
      running = new Datastore(parseXml(xml));
      candidate = running.clone();
    },
    rpcLog,
    activeSessions: () => sessions.size,
    lockHolder: (ds) => locks[ds],
    confirmPending: () => pending !== undefined,
    close: async () => {
      revertPending();
      for (const c of connections) c.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function handleSession(stream: ServerChannel, conn: Connection): void {
    const sid = nextSession++;
    const deframer = new SimDeframer();
    let helloDone = false;
    let ended = false;
    let held: string | undefined;
    let firstRpc = true;

    let stallNext = false;
    const write = (xml: string): void => {
      if (ended) return;
      let framed: Buffer;
      const body = Buffer.from(xml, 'utf8');
      if (deframer.chunked) {
        const pieces: Buffer[] = [];
        for (let i = 0; i < body.length; i += maxChunk) {
          const part = body.subarray(i, i + maxChunk);
          pieces.push(Buffer.from(`\n#${part.length}\n`), part);
        }
        pieces.push(Buffer.from('\n##\n'));
        framed = Buffer.concat(pieces);
      } else {
        framed = Buffer.concat([body, Buffer.from(']]>]]>')]);
      }
      if (stallNext) {
        stallNext = false;
        framed = framed.subarray(0, Math.max(1, framed.length >> 1));
      }
      if (writeSplit > 0) for (let i = 0; i < framed.length; i += writeSplit) stream.write(framed.subarray(i, i + writeSplit));
      else stream.write(framed);
    };

    const end = (): void => {
      if (ended) return;
      ended = true;
      sessions.delete(sid);
      if (locks.running === sid) delete locks.running;
      if (locks.candidate === sid) {
        delete locks.candidate;
        candidate = running.clone();
      }
      // RFC 6241 §8.4.1: the session that issued a confirmed commit ended before confirming.
      if (pending?.session === sid) revertPending();
    };
    sessions.set(sid, end);
    stream.on('close', end);
    conn.on('close', end);

    if (device.faults.garbage === 'hello') {
      stream.write('SSH-2.0-garbage\r\n%%% not netconf %%%\n');
    } else if (device.faults.hang !== 'hello') {
      write(
        `<?xml version="1.0" encoding="UTF-8"?><hello xmlns="${NS_BASE}"><capabilities>${capabilities
          .map((c) => `<capability>${escapeText(c)}</capability>`)
          .join('')}</capabilities><session-id>${sid}</session-id></hello>`,
      );
    }

    stream.on('data', (d: Buffer) => {
      if (ended) return;
      deframer.push(d);
      try {
        for (let msg = deframer.next(); msg !== undefined && !ended; msg = deframer.next()) {
          if (!helloDone) {
            helloDone = true;
            const clientCaps = clientHelloCaps(msg);
            if (!clientCaps) {
              stream.close();
              return;
            }
            deframer.chunked = base11 && clientCaps.includes(CAP.base11);
            continue;
          }
          if (firstRpc) {
            firstRpc = false;
            if (device.faults.holdFirstRpc) {
              held = msg;
              continue;
            }
          }
          if (held !== undefined) onRpc(held);
          held = undefined;
          onRpc(msg);
        }
      } catch {
        // Bad framing from the client: RFC 6242 says terminate the session.
        stream.close();
      }
    });

    const datastore = (ds: string): Datastore => (ds === 'candidate' ? candidate : running);

    function onRpc(text: string): void {
      let rpc: XElement | undefined;
      try {
        rpc = parseXml(text).find(isElement);
      } catch (err) {
        write(
          replyXml(
            undefined,
            rpcErrorXml({
              type: 'rpc',
              tag: 'malformed-message',
              message: `not well-formed XML: ${err instanceof XmlError ? err.message : String(err)}`,
            }),
          ),
        );
        return;
      }
      if (!rpc || localName(rpc.name) !== 'rpc') {
        write(replyXml(undefined, rpcErrorXml({ type: 'rpc', tag: 'malformed-message', message: 'expected <rpc>' })));
        return;
      }
      const id = rpc.attrs['message-id'];
      if (id === undefined) {
        write(
          replyXml(
            undefined,
            rpcErrorXml({
              type: 'rpc',
              tag: 'missing-attribute',
              message: 'message-id attribute missing',
              info: '<bad-attribute>message-id</bad-attribute><bad-element>rpc</bad-element>',
            }),
          ),
        );
        return;
      }
      const op = elements(rpc.children)[0];
      const opName = op ? localName(op.name) : '';
      rpcLog.push(opName);
      const faults = device.faults;
      if (faults.hang === 'rpc' || faults.hang === opName) return;
      if (faults.hang === 'confirming-commit' && opName === 'commit' && pending && op && !child(op, 'confirmed')) return;
      if (faults.stallMidReply === opName) stallNext = true;
      if (faults.garbage === 'rpc') {
        stream.write(deframer.chunked ? '\n#zz\n<garbage>' : 'garbage garbage');
        return;
      }
      try {
        if (!op) throw new Failure({ type: 'rpc', tag: 'missing-element', message: 'rpc has no operation' });
        const result = dispatch(opName, op);
        if (result === 'drop') {
          conn.end();
          end();
          return;
        }
        const slow = faults.slowReply?.op === opName ? faults.slowReply.ms : 0;
        if (slow > 0) setTimeout(() => write(replyXml(id, result)), slow);
        else write(replyXml(id, result));
        if (opName === 'close-session') {
          end();
          stream.close();
        }
      } catch (err) {
        if (err instanceof Failure) write(replyXml(id, rpcErrorXml(err.err)));
        else write(replyXml(id, rpcErrorXml({ tag: 'operation-failed', message: String(err) })));
      }
    }

    function targetOf(op: XElement, param: 'target' | 'source'): 'running' | 'candidate' {
      const t = child(op, param);
      const ds = t ? elements(t.children)[0] : undefined;
      const name = ds ? localName(ds.name) : '';
      if (name === 'running') return 'running';
      if (name === 'candidate') {
        if (!hasCandidate)
          throw new Failure({
            type: 'protocol',
            tag: 'invalid-value',
            message: 'candidate datastore not supported',
            path: `/rpc/${localName(op.name)}/${param}`,
          });
        return 'candidate';
      }
      throw new Failure({
        type: 'protocol',
        tag: name ? 'invalid-value' : 'missing-element',
        message: `unsupported ${param} "${name}"`,
        info: `<bad-element>${param}</bad-element>`,
      });
    }

    function checkNotLocked(ds: 'running' | 'candidate'): void {
      const holder = locks[ds];
      if (holder !== undefined && holder !== sid) {
        throw new Failure({
          type: 'protocol',
          tag: 'in-use',
          message: `${ds} is locked by session ${holder}`,
          info: `<session-id>${holder}</session-id>`,
        });
      }
    }

    /**
     * The parts an edit-config goes in by, each all or nothing: the whole config with
     * rollback-on-error; otherwise (stop-on-error) each top-level subtree, so a refused one keeps
     * those before it. A default-operation replace stays whole: it rebuilds the datastore.
     */
    function editSteps(op: XElement, config: XElement[], defOp: string): XElement[][] {
      const option = textOf(child(op, 'error-option')).trim();
      if (option === 'rollback-on-error' && !hasRollbackOnError)
        throw new Failure({ type: 'protocol', tag: 'operation-not-supported', message: 'rollback-on-error is not supported' });
      return option === 'rollback-on-error' || defOp === 'replace' ? [config] : config.map((el) => [el]);
    }

    /** The rejectMarker fault: a part holding its text is refused (invalid-value, with error-path). */
    function rejectMarked(part: XElement[]): void {
      const marker = device.faults.rejectMarker;
      const bad = marker ? findText(part, marker, '') : undefined;
      if (bad)
        throw new Failure({
          tag: 'invalid-value',
          message: `value "${marker}" is not allowed`,
          path: bad.path,
          info: `<bad-element>${bad.name}</bad-element>`,
        });
    }

    function dispatch(name: string, op: XElement): string | 'drop' {
      switch (name) {
        case 'get':
          return `<data>${running.text()}</data>`;
        case 'get-config':
          return `<data>${datastore(targetOf(op, 'source')).text()}</data>`;
        case 'edit-config': {
          const ds = targetOf(op, 'target');
          if (ds === 'running' && !hasWritableRunning)
            throw new Failure({ type: 'protocol', tag: 'operation-not-supported', message: 'running is not writable; use the candidate' });
          checkNotLocked(ds);
          const config = child(op, 'config');
          if (!config)
            throw new Failure({
              type: 'protocol',
              tag: 'missing-element',
              message: 'edit-config without <config>',
              info: '<bad-element>config</bad-element>',
            });
          const defOp = textOf(child(op, 'default-operation')).trim() || 'merge';
          if (!['merge', 'replace', 'none'].includes(defOp))
            throw new Failure({ type: 'protocol', tag: 'invalid-value', message: `bad default-operation ${defOp}` });
          if (device.faults.failOnEdit) throw new Failure({ tag: 'operation-failed', message: 'injected edit-config failure' });
          for (const part of editSteps(op, elements(config.children), defOp)) {
            rejectMarked(part);
            try {
              datastore(ds).edit(part, defOp as 'merge' | 'replace' | 'none');
            } catch (err) {
              if (err instanceof EditError) throw new Failure({ tag: err.tag, message: err.message, path: err.path, info: err.info });
              throw err;
            }
          }
          return '<ok/>';
        }
        case 'lock': {
          const ds = targetOf(op, 'target');
          const holder = locks[ds];
          if (holder !== undefined) {
            throw new Failure({
              type: 'protocol',
              tag: 'lock-denied',
              message: `lock is already held by session ${holder}`,
              info: `<session-id>${holder}</session-id>`,
            });
          }
          if (ds === 'candidate' && candidate.text() !== running.text() && !pending) {
            throw new Failure({
              type: 'protocol',
              tag: 'lock-denied',
              message: 'candidate has uncommitted changes',
              info: '<session-id>0</session-id>',
            });
          }
          locks[ds] = sid;
          return '<ok/>';
        }
        case 'unlock': {
          const ds = targetOf(op, 'target');
          if (locks[ds] !== sid) throw new Failure({ type: 'protocol', tag: 'operation-failed', message: `${ds} is not locked by this session` });
          delete locks[ds];
          return '<ok/>';
        }
        case 'discard-changes':
          if (!hasCandidate) throw new Failure({ type: 'protocol', tag: 'operation-not-supported', message: 'no candidate datastore' });
          checkNotLocked('candidate');
          candidate = running.clone();
          return '<ok/>';
        case 'commit': {
          if (!hasCandidate) throw new Failure({ type: 'protocol', tag: 'operation-not-supported', message: 'no candidate datastore' });
          checkNotLocked('candidate');
          checkNotLocked('running');
          const confirmed = child(op, 'confirmed') !== undefined;
          if (confirmed && !hasConfirmed)
            throw new Failure({ type: 'protocol', tag: 'operation-not-supported', message: 'confirmed commit not supported' });
          if (pending && !confirmed && device.faults.dropOnConfirmingCommit) return 'drop';
          if (device.faults.failCommit) throw new Failure({ tag: 'operation-failed', message: 'injected commit failure' });
          if (confirmed) {
            const timeoutSec = Number(textOf(child(op, 'confirm-timeout')).trim() || '600');
            if (!Number.isInteger(timeoutSec) || timeoutSec < 1)
              throw new Failure({ type: 'protocol', tag: 'invalid-value', message: 'bad confirm-timeout', path: '/rpc/commit/confirm-timeout' });
            const rollback = pending ? pending.rollback : running.clone();
            if (pending) clearTimeout(pending.timer);
            const timer = setTimeout(revertPending, timeoutSec * 1000);
            timer.unref();
            pending = { session: sid, rollback, timer };
          } else if (pending) {
            clearTimeout(pending.timer);
            pending = undefined;
          }
          running = candidate.clone();
          return '<ok/>';
        }
        case 'cancel-commit':
          if (!pending) throw new Failure({ type: 'protocol', tag: 'operation-failed', message: 'no confirmed commit is pending' });
          revertPending();
          return '<ok/>';
        case 'close-session':
          return '<ok/>';
        case 'get-my-session':
          if (options.yumaMySession) return `<indent xmlns="${YUMA_MYSESSION}">2</indent><linesize xmlns="${YUMA_MYSESSION}">72</linesize>`;
      }
      throw new Failure({
        type: 'protocol',
        tag: 'operation-not-supported',
        message: `operation ${name} is not supported`,
        info: `<bad-element>${name}</bad-element>`,
      });
    }
  }

  const server = new Server({ hostKeys: [options.hostKey ?? defaultHostKey()] }, (conn) => {
    connections.add(conn);
    conn.on('close', () => connections.delete(conn));
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => {
      if (ctx.method === 'password' && safeEqual(ctx.username, username) && safeEqual(ctx.password, password)) return ctx.accept();
      if (ctx.method === 'publickey' && safeEqual(ctx.username, username)) {
        const key = authorized.find((k) => k.type === ctx.key.algo && k.getPublicSSH().equals(ctx.key.data));
        if (key && (!ctx.signature || (ctx.blob && key.verify(ctx.blob, ctx.signature, ctx.hashAlgo)))) return ctx.accept();
      }
      ctx.reject(['password', 'publickey']);
    });
    conn.on('ready', () => {
      conn.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('subsystem', (accept, reject, info) => {
          if (info.name !== 'netconf') return reject();
          handleSession(accept(), conn);
        });
      });
    });
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  (device as { host: string }).host = options.host ?? '127.0.0.1';
  (device as { port: number }).port = (server.address() as AddressInfo).port;
  return device;
}

function clientHelloCaps(msg: string): string[] | undefined {
  try {
    const hello = parseXml(msg).find(isElement);
    if (!hello || localName(hello.name) !== 'hello') return undefined;
    const caps = child(hello, 'capabilities');
    const list = caps ? childrenNamed(caps, 'capability').map((c) => textOf(c).trim()) : [];
    return list.includes(CAP.base10) || list.includes(CAP.base11) ? list : undefined;
  } catch {
    return undefined;
  }
}

function replyXml(id: string | undefined, body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><rpc-reply xmlns="${NS_BASE}"${id !== undefined ? ` message-id="${escapeAttr(id)}"` : ''}>${body}</rpc-reply>`;
}

function findText(nodes: XElement[], marker: string, path: string): { path: string; name: string } | undefined {
  for (const n of nodes) {
    const here = `${path}/${localName(n.name)}`;
    if (n.children.some((c) => !isElement(c) && c.text.includes(marker))) return { path: here, name: localName(n.name) };
    const deeper = findText(elements(n.children), marker, here);
    if (deeper) return deeper;
  }
  return undefined;
}

export interface NetconfFleet {
  devices: NetconfDevice[];
  close(): Promise<void>;
}

/** Start n devices (sharing one host key) with options, or per-index options. */
export async function startNetconfFleet(
  n: number,
  options: NetconfDeviceOptions | ((i: number) => NetconfDeviceOptions) = {},
): Promise<NetconfFleet> {
  const devices: NetconfDevice[] = [];
  const batch = 50;
  for (let i = 0; i < n; i += batch) {
    const started = await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, (_, j) => startNetconfDevice(typeof options === 'function' ? options(i + j) : options)),
    );
    devices.push(...started);
  }
  return {
    devices,
    close: async () => {
      await Promise.all(devices.map((d) => d.close()));
    },
  };
}
