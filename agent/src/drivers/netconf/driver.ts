import {
  DEFAULT_LIMITS,
  DriverError,
  mayHaveGoneIn,
  type ConfigChange,
  type ConfigPreview,
  type DeviceDriver,
  type DeviceSession,
  type DeviceTarget,
  type FetchedConfig,
  type SessionLimits,
  type SshHostKey,
  type Transcript,
} from '../types';
import { CAP, NS_BASE, NetconfClient } from './client';
import { buildEditContent } from './edit';
import { XmlError, child, detachSubtrees, elements, localName, parseXml, prefixDecls, serializeXml, type XElement } from './xml';

/** Namespace of an element from its own declarations (default or of its prefix). */
function namespaceOf(el: XElement): string {
  const i = el.name.indexOf(':');
  return (i < 0 ? el.attrs.xmlns : el.attrs[`xmlns:${el.name.slice(0, i)}`]) ?? '';
}

/**
 * A datastore another session holds (a dry run's preview, a colleague's commit, another manager)
 * is usually free again within seconds: an edit waits this long for its lock before it fails.
 */
export const LOCK_WAIT_MS = 5_000;
const LOCK_RETRY_MS = 250;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface NetconfDriverOptions {
  /** Seconds a confirmed commit waits for its confirming commit before the device reverts. */
  confirmTimeoutSec?: number;
  /** How long a datastore another session has locked is waited for (default LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** Offer base:1.1 chunked framing in our hello (default true). */
  offerBase11?: boolean;
  /** Largest message taken from a device (default DEFAULT_MAX_ANSWER_BYTES). */
  maxMessageBytes?: number;
}

type Datastore = 'running' | 'candidate';

export class NetconfSession implements DeviceSession {
  readonly transport = 'netconf' as const;

  constructor(
    private readonly client: NetconfClient,
    private readonly options: NetconfDriverOptions,
    private readonly transcript?: Transcript,
  ) {}

  get hostKey(): SshHostKey | undefined {
    return this.client.hostKey;
  }

  get capabilities(): string[] {
    return this.client.serverCapabilities;
  }

  get framing(): string {
    return this.client.framing;
  }

  async getConfig(source: Datastore = 'running'): Promise<string> {
    const reply = await this.client.rpc(`<get-config><source><${source}/></source></get-config>`, `get-config ${source}`);
    const data = child(reply, 'data');
    if (!data) throw new DriverError('protocol', `get-config ${source} reply from ${this.client.where} has no <data>`);
    const inScope = { ...prefixDecls(reply), ...prefixDecls(data) };
    return serializeXml(detachSubtrees(elements(data.children), inScope));
  }

  async fetchConfig(): Promise<FetchedConfig> {
    return { text: await this.getConfig('running'), format: 'xml', via: 'netconf' };
  }

  async apply(changes: ConfigChange[]): Promise<void> {
    if (changes.length === 0) return;
    const content = buildEditContent(changes);
    await this.editCycle(content, 'merge', `${changes.length} change(s)`);
  }

  async restore(config: FetchedConfig): Promise<void> {
    if (config.format !== 'xml') {
      throw new DriverError('device', `cannot restore a ${config.format} configuration over NETCONF (needs the XML fetched via netconf)`);
    }
    let backup: XElement[];
    try {
      backup = elements(parseXml(config.text));
    } catch (err) {
      throw new DriverError('device', `backup is not well-formed XML: ${err instanceof XmlError ? err.message : String(err)}`);
    }
    // default-operation replace should replace the whole datastore (RFC 6241 §7.2), but some
    // servers (netconfd among them) only replace the top-level nodes present in <config>. So
    // top-level nodes that exist now and are absent from the backup are removed explicitly.
    const current = elements(parseXml(await this.getConfig('running')));
    const same = (a: XElement, b: XElement): boolean => localName(a.name) === localName(b.name) && namespaceOf(a) === namespaceOf(b);
    const removals = current
      .filter((c) => !backup.some((b) => same(b, c)))
      .map((c) => {
        const decls = Object.fromEntries(Object.entries(c.attrs).filter(([k]) => k === 'xmlns' || k.startsWith('xmlns:')));
        return { name: c.name, attrs: { ...decls, 'xmlns:nc': NS_BASE, 'nc:operation': 'remove' }, children: [] };
      });
    await this.editCycle(config.text + serializeXml(removals, null), 'replace', 'restore');
  }

  /**
   * Dry run on the device itself: lock the candidate, edit it as apply() would, read it back,
   * then discard-changes and unlock, so running never changes. Needs :candidate.
   */
  async preview(changes: ConfigChange[]): Promise<ConfigPreview> {
    const c = this.client;
    if (!c.has(CAP.candidate)) {
      throw new DriverError(
        'device',
        `${c.where} has no :candidate datastore; a NETCONF dry run edits the candidate and discards it, so it cannot run on this device`,
      );
    }
    const before = await this.getConfig('running');
    if (changes.length === 0) return { before, after: before };
    this.transcript?.write('info', `dry run: ${changes.length} change(s) into the candidate, then discarded`);
    await this.lock('candidate');
    try {
      const edit =
        '<edit-config><target><candidate/></target><default-operation>merge</default-operation>' +
        `<config>${buildEditContent(changes)}</config></edit-config>`;
      await c.rpc(edit, 'edit-config candidate (dry run)');
      return { before, after: await this.getConfig('candidate') };
    } finally {
      if (!c.broken) {
        await c.rpc('<discard-changes/>', 'discard-changes').catch((e) => this.transcript?.write('info', `discard-changes failed: ${String(e)}`));
        await c
          .rpc('<unlock><target><candidate/></target></unlock>', 'unlock candidate')
          .catch((e) => this.transcript?.write('info', `unlock failed: ${String(e)}`));
      }
    }
  }

  /**
   * One edit: with :candidate, lock → edit candidate → (confirmed) commit → confirming commit →
   * unlock, discarding the candidate on any failure; otherwise lock → edit running → unlock.
   */
  private async editCycle(content: string, defaultOperation: 'merge' | 'replace', what: string): Promise<void> {
    const c = this.client;
    const useCandidate = c.has(CAP.candidate);
    if (!useCandidate && !c.has(CAP.writableRunning)) {
      throw new DriverError('device', `${c.where} advertises neither :candidate nor :writable-running; cannot change its configuration`);
    }
    const target: Datastore = useCandidate ? 'candidate' : 'running';
    const errorOption = !useCandidate && c.has(CAP.rollbackOnError) ? '<error-option>rollback-on-error</error-option>' : '';
    // Otherwise an edit of running is stop-on-error (RFC 6241 §7.2): the device keeps what it applied
    // before the error. (continue-on-error, which keeps even more, is never asked for.)
    const keepsPartOnError = !useCandidate && errorOption === '';
    const edit =
      `<edit-config><target><${target}/></target><default-operation>${defaultOperation}</default-operation>` +
      `${errorOption}<config>${content}</config></edit-config>`;
    this.transcript?.write('info', `applying ${what} to ${target}`);

    await this.lock(target);
    let committed = false;
    // Whether the rpc in flight changes the running config (the edit of a device without candidate,
    // then the commits): when its answer never comes it may have gone in, and so may part of an
    // edit a stop-on-error device refused; the push is undone (partial) rather than reported as
    // having changed nothing.
    let changesRunning = !useCandidate;
    try {
      await c.slowRpc(edit, `edit-config ${target}`);
      changesRunning = useCandidate;
      if (useCandidate) {
        const confirmed = c.has(CAP.confirmedCommit10) || c.has(CAP.confirmedCommit11);
        if (confirmed) {
          const timeout = this.options.confirmTimeoutSec ?? 120;
          await c.slowRpc(`<commit><confirmed/><confirm-timeout>${timeout}</confirm-timeout></commit>`, 'confirmed commit');
          committed = true;
          try {
            await c.slowRpc('<commit/>', 'confirming commit');
          } catch (err) {
            // The device reverts by itself when the timeout passes or this session ends; with
            // :confirmed-commit:1.1 we can make it revert now.
            if (!c.broken && c.has(CAP.confirmedCommit11)) await c.rpc('<cancel-commit/>', 'cancel-commit').catch(() => undefined);
            throw err;
          }
        } else {
          await c.slowRpc('<commit/>', 'commit');
          committed = true;
        }
      }
    } catch (err) {
      if (useCandidate && !committed && !c.broken) {
        await c.rpc('<discard-changes/>', 'discard-changes').catch((e) => this.transcript?.write('info', `discard-changes failed: ${String(e)}`));
      }
      if (changesRunning && err instanceof DriverError) {
        if (err.kind !== 'device') throw mayHaveGoneIn(err);
        if (keepsPartOnError)
          throw mayHaveGoneIn(err, 'without :rollback-on-error the device keeps what it applied before the error: part of the change may be on it');
      }
      throw err;
    } finally {
      if (!c.broken) {
        await c
          .rpc(`<unlock><target><${target}/></target></unlock>`, `unlock ${target}`)
          .catch((e) => this.transcript?.write('info', `unlock failed: ${String(e)}`));
      }
    }
  }

  /** Locks the datastore, waiting up to lockWaitMs while another session holds it (lock-denied). */
  private async lock(target: Datastore): Promise<void> {
    const until = Date.now() + (this.options.lockWaitMs ?? LOCK_WAIT_MS);
    for (let waited = false; ; waited = true) {
      try {
        await this.client.rpc(`<lock><target><${target}/></target></lock>`, `lock ${target}`);
        return;
      } catch (err) {
        const denied = err instanceof DriverError && err.kind === 'device' && err.message.includes('lock-denied');
        if (!denied || this.client.broken || Date.now() >= until) {
          throw denied && waited ? new DriverError('device', `${err.message} (still held after waiting for it)`) : err;
        }
        if (!waited) this.transcript?.write('info', `${target} is locked by another session; waiting for it`);
        await sleep(LOCK_RETRY_MS);
      }
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

export type NetconfDeviceSession = NetconfSession;

/** The DeviceDriver for 'netconf'; open() gives the richer session (capabilities, framing, getConfig). */
export interface NetconfDriver extends DeviceDriver {
  open(target: DeviceTarget, limits?: Partial<SessionLimits>, transcript?: Transcript): Promise<NetconfDeviceSession>;
}

export function createNetconfDriver(options: NetconfDriverOptions = {}): NetconfDriver {
  return {
    transport: 'netconf',
    async open(target, limits, transcript) {
      const l: SessionLimits = { ...DEFAULT_LIMITS, ...limits };
      const cred = target.credentials;
      const client = await NetconfClient.connect({
        host: target.host,
        port: target.ports.netconf,
        username: cred.username,
        password: cred.password,
        privateKey: cred.private_key,
        limits: l,
        transcript,
        secrets: [cred.password ?? '', cred.enable_password ?? ''],
        offerBase11: options.offerBase11,
        maxMessageBytes: options.maxMessageBytes,
        name: target.name,
        pinnedHostKey: target.ssh_host_key,
      });
      return new NetconfSession(client, options, transcript);
    },
  };
}

export const netconfDriver: NetconfDriver = createNetconfDriver();
