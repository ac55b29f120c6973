/**
 * SSH CLI session: login, prompt learning, enable, pager off, commands and config pulls over
 * one interactive shell, driven entirely by the device's dialect entry.
 */
import type { Client as SshClient } from 'ssh2';
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_ANSWER_BYTES,
  DriverError,
  type ConfigChange,
  type DeviceDriver,
  type DeviceSession,
  type DeviceTarget,
  type FetchedConfig,
  type SessionLimits,
  type SshHostKey,
  type Transcript,
} from '../types';
import { connectSsh, keepaliveError, openShell } from './connect';
import { getDialect, stableConfigLines, USER_PLACEHOLDER, type SshDialect } from './dialects';
import { scpUpload } from './scp';
import { CliShell } from './shell';
import { cliLines, cliWord, HOSTNAME_LINE, lineFailed, UNKNOWN_COMMAND, unanswered } from './config-lines';
import { dropEcho, dropMatching, makeMasker, masked, renderLines, trimBlankLines } from './text';

export interface SshCliDriverOptions {
  /** Upper bound on one command's output; a device sending more is cut off. Default 32 MiB. */
  maxOutputBytes?: number;
  /** How long close() waits for the device to acknowledge the disconnect. Default 1000 ms. */
  closeGraceMs?: number;
  /** Also offer old key exchanges, ciphers and MACs (after the modern ones). Default true. */
  legacyAlgorithms?: boolean;
}

export const DEFAULT_MAX_OUTPUT_BYTES = DEFAULT_MAX_ANSWER_BYTES;

/** A DeviceSession whose run() always exists. */
export interface SshCliSessionApi extends DeviceSession {
  readonly transport: 'ssh';
  run(command: string): Promise<string>;
  apply(changes: ConfigChange[]): Promise<void>;
  restore(config: FetchedConfig): Promise<void>;
}

interface ExecOptions {
  /** The prompt's host part may change with this command (`hostname x`, a commit): learn it again. */
  relearnHost?: boolean;
  /** A question the device may ask before the prompt comes back, and what to answer. */
  confirm?: { prompt: RegExp; answer: string };
  /** A commit, replace or load: the device may work on it in silence for minutes (SessionLimits.commitTimeoutMs). */
  slow?: boolean;
}

/** A DeviceDriver whose sessions are SSH CLI sessions. */
export interface SshCliDriver extends DeviceDriver {
  readonly transport: 'ssh';
  open(target: DeviceTarget, limits?: Partial<SessionLimits>, transcript?: Transcript): Promise<SshCliSessionApi>;
}

type Level = 'user' | 'privileged' | 'config';

interface SessionContext {
  client: SshClient;
  hostKey: SshHostKey | undefined;
  shell: CliShell;
  dialect: SshDialect;
  target: DeviceTarget;
  limits: SessionLimits;
  /** "name (host:port)", the start of every message. */
  where: string;
  info: (text: string) => void;
  /** Replaces secrets with ********; applied to the transcript and to every error message. */
  mask: (text: string) => string;
  closeGraceMs: number;
}

const LEVELS: Level[] = ['config', 'privileged', 'user'];

/** Aborts typed at most to leave configuration mode: FortiOS takes one per open block (`config`, `edit`). */
const MAX_OPEN_BLOCKS = 16;

class SshCliSession implements SshCliSessionApi {
  readonly transport = 'ssh' as const;
  readonly hostKey: SshHostKey | undefined;
  private host?: string;
  level: Level = 'user';
  private queue: Promise<unknown> = Promise.resolve();
  private closing?: Promise<void>;
  private clientClosed = false;

  private readonly client: SshClient;
  private readonly shell: CliShell;
  private readonly dialect: SshDialect;
  private readonly target: DeviceTarget;
  private readonly limits: SessionLimits;
  private readonly where: string;
  private readonly info: (text: string) => void;
  private readonly mask: (text: string) => string;
  private readonly closeGraceMs: number;

  constructor(c: SessionContext) {
    ({
      client: this.client,
      hostKey: this.hostKey,
      shell: this.shell,
      dialect: this.dialect,
      target: this.target,
      limits: this.limits,
      where: this.where,
      info: this.info,
      mask: this.mask,
      closeGraceMs: this.closeGraceMs,
    } = c);
    this.client.once('close', () => {
      this.clientClosed = true;
    });
  }

  /** The prompt level of `line`, or undefined when it is not this device's prompt. */
  private promptLevel(line: string): Level | undefined {
    for (const level of LEVELS) {
      const m = this.dialect.prompts[level].exec(line);
      if (m && (this.host === undefined || m.groups?.host === this.host)) return level;
    }
    return undefined;
  }

  private readonly isPrompt = (line: string): boolean => this.promptLevel(line) !== undefined;

  /** Waits for the first prompt, confirms it, enables and turns the pager off. */
  async init(deadline: number): Promise<void> {
    const connectWait = (what: string) => ({
      what,
      timeoutMs: Math.max(1, deadline - Date.now()),
      timeoutName: 'connect' as const,
      limitMs: this.limits.connectTimeoutMs,
      idleMs: this.limits.idleTimeoutMs,
      until: [this.isPrompt],
      pager: true,
    });
    await this.shell.expect(connectWait('the first prompt'));
    // Press Enter once and take the prompt that comes back: a banner line that merely looks
    // like a prompt cannot fool us, and the host part of the prompt is learned from it.
    this.shell.send(this.dialect.newline);
    const { lastLine } = await this.shell.expect(connectWait('the prompt after Enter'));
    this.learnPrompt(lastLine);
    if (this.dialect.enable.needed && this.level === 'user') await this.enable();
    for (const cmd of this.dialect.pagerOff) {
      try {
        await this.exec(cmd, true);
      } catch (e) {
        if (!(e instanceof DriverError) || e.kind !== 'device') throw e;
        this.info(`ignored: ${e.message}`);
      }
    }
  }

  private learnPrompt(line: string): void {
    for (const level of LEVELS) {
      const m = this.dialect.prompts[level].exec(line);
      if (m) {
        this.host = m.groups?.host;
        this.level = level;
        this.info(`prompt '${line}' (${level})`);
        return;
      }
    }
  }

  private async enable(): Promise<void> {
    const { enable } = this.dialect;
    const passwordPrompt = (l: string) => enable.passwordPrompt.test(l);
    const wait = (what: string) => ({
      what,
      ...this.waitLimits(false),
      until: [passwordPrompt, this.isPrompt],
      pager: false,
    });
    this.shell.send(enable.command + this.dialect.newline);
    let r = await this.shell.expect(wait(`the answer to '${enable.command}'`));
    if (r.matched === 0) {
      const secret = this.target.credentials.enable_password;
      if (secret === undefined || secret === '') {
        throw new DriverError('auth', `${this.where}: the device asks for an enable password but the connection profile has none`);
      }
      this.shell.send(secret + this.dialect.newline);
      r = await this.shell.expect(wait('the answer to the enable password'));
    }
    const level = r.matched === 1 ? this.promptLevel(r.lastLine) : undefined;
    if (level === 'privileged' || level === 'config') {
      this.level = level;
      this.info('enabled');
      return;
    }
    const lines = renderLines(r.raw, this.dialect.pager);
    const said = lines.find((l) => enable.failure.some((re) => re.test(l)) || /%/.test(l));
    throw new DriverError('auth', `${this.where}: enable failed: the device refused the enable password${said ? ` (${said.trim()})` : ''}`);
  }

  /** How long a command may take and stay silent: a slow one (a commit, replace or load) both for SessionLimits.commitTimeoutMs. */
  private waitLimits(slow: boolean) {
    const { commandTimeoutMs, idleTimeoutMs, commitTimeoutMs } = this.limits;
    const limitMs = slow ? Math.max(commitTimeoutMs, commandTimeoutMs) : commandTimeoutMs;
    return { timeoutMs: limitMs, timeoutName: 'command' as const, limitMs, idleMs: slow ? limitMs : idleTimeoutMs };
  }

  /** Sends one command and returns its cleaned output lines (echo, prompt and noise removed). */
  private async exec(command: string, checkErrors: boolean, opts: ExecOptions = {}): Promise<string[]> {
    this.shell.send(command + this.dialect.newline);
    const known = this.host;
    if (opts.relearnHost) this.host = undefined;
    let raw = '';
    let lastLine = '';
    try {
      const confirm = opts.confirm;
      for (let asked = 0; ; asked++) {
        const r = await this.shell.expect({
          what: `the output of '${command}'`,
          ...this.waitLimits(opts.slow === true),
          until: confirm && asked < 3 ? [this.isPrompt, (l: string) => confirm.prompt.test(l)] : [this.isPrompt],
          pager: true,
        });
        raw += r.raw;
        lastLine = r.lastLine;
        if (r.matched === 0) break;
        this.info(`answered '${confirm!.answer}' to '${r.lastLine}'`);
        this.shell.send(confirm!.answer + this.dialect.newline);
      }
    } finally {
      if (opts.relearnHost && this.host === undefined) this.host = known;
    }
    if (opts.relearnHost) this.learnPrompt(lastLine);
    this.level = this.promptLevel(lastLine) ?? this.level;
    const lines = renderLines(raw, this.dialect.pager);
    lines.pop(); // the prompt
    const out = dropMatching(dropEcho(lines, command), this.dialect.noiseLines);
    if (checkErrors) {
      const bad = out.find((l) => this.dialect.errorPatterns.some((re) => re.test(l.trim())));
      if (bad !== undefined) throw new DriverError('device', `${this.where}: the device rejected '${command}': ${bad.trim()}`);
    }
    return out;
  }

  /** One at a time: the shell is a single conversation. */
  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() => {
      if (this.closing) throw new DriverError('protocol', `${this.where}: session is closed`);
      return fn();
    });
    this.queue = next.catch(() => undefined);
    return next.catch(async (e) => {
      // After a timeout or a protocol error the conversation is out of step: drop the session.
      if (!(e instanceof DriverError) || e.kind !== 'device') await this.close();
      throw masked(e, this.mask);
    });
  }

  run(command: string): Promise<string> {
    return this.serialize(async () => trimBlankLines(await this.exec(command, true)).join('\n'));
  }

  fetchConfig(): Promise<FetchedConfig> {
    return this.serialize(async () => {
      const cmd = this.dialect.showConfig;
      const lines = stableConfigLines(this.dialect, await this.exec(cmd, true));
      if (lines.length === 0) throw new DriverError('device', `${this.where}: '${cmd}' returned no configuration`);
      // Refused here too, not only by restore(): stored, a cut-short pull would show as a change
      // that removed the rest, and a deployment would push with no way back.
      const cut = this.dialect.truncated?.(lines);
      if (cut !== undefined) {
        throw new DriverError('device', `${this.where}: the configuration '${cmd}' returned looks cut short: ${cut}; not taken as a backup`);
      }
      return { text: lines.join('\n') + '\n', format: 'cli', via: 'ssh' };
    });
  }

  /**
   * Types the rendered lines in configuration mode: enter (`configure terminal`, `configure`;
   * FortiOS has none, its lines open their own blocks), one line at a time with the dialect's
   * error patterns checked after each, commit where the dialect has one, and leave. A refused
   * line: commit dialects abort (nothing changed), FortiOS aborts the open blocks (what `next` or
   * `end` saved stays); the others stop at that line. A `partial` DriverError says that earlier
   * lines took effect. A shared candidate that already holds uncommitted changes is refused
   * before any line is typed (Junos); one that keeps changes per account (PAN-OS) has this
   * account's leftovers discarded first, and the commit and abort take this account's only.
   */
  apply(changes: ConfigChange[]): Promise<void> {
    return this.serialize(async () => {
      const lines = cliLines(changes, this.where);
      if (lines.length === 0) return;
      const mode = this.dialect.configMode;
      const [commit, discardOwn] = [mode.commit, mode.discardOwn].map((c) => c && this.command(c));
      const place = mode.enter ? 'in configuration mode' : 'at the top-level prompt';
      this.info(`applying ${lines.length} line(s) ${place}${commit ? ` with '${commit}'` : ''}`);
      await this.refuseUncommitted(await this.enterConfig());
      let taken = 0;
      await this.configuring(async () => {
        if (discardOwn) await this.discardOwn(discardOwn);
        for (const [i, line] of lines.entries()) {
          try {
            await this.exec(line, true, { relearnHost: HOSTNAME_LINE.test(line) || this.savesBlock(line) });
          } catch (e) {
            throw lineFailed(e, i, lines.length, taken, mode);
          }
          if (this.saved(line)) taken = i + 1;
        }
        if (commit) await this.commit(commit);
      });
    });
  }

  /**
   * Commits what configuration mode holds with `command` (the dialect's commit, or a restore's
   * `commit replace`): as it is, or where the dialect has confirmed commits as a confirmed commit
   * then the confirming one, so that a change which cuts the management path, and with it this
   * session, is rolled back by the device itself (see ConfirmedCommit). A failure that may leave
   * the change on the device is partial and, after a confirmed commit, says that the device rolls
   * it back by itself unless confirmed.
   */
  private async commit(command: string, confirm?: ExecOptions['confirm']): Promise<void> {
    const confirmed = this.dialect.configMode.confirmedCommit;
    const run = (cmd: string, answer?: ExecOptions['confirm']) => this.exec(cmd, true, { relearnHost: true, slow: true, confirm: answer });
    if (!confirmed) {
      await run(command, confirm).catch((e: unknown) => {
        throw unanswered(e, `during '${command}': the change may have been committed`);
      });
      return;
    }
    const trial = `${command} ${confirmed.option}`;
    const rollsBack = `the device rolls it back by itself ${confirmed.window} after '${trial}' unless confirmed`;
    await run(trial, confirm).catch((e: unknown) => {
      throw unanswered(e, `during '${trial}': the change may have been committed; if so, ${rollsBack}`);
    });
    await run(confirmed.confirm).catch((e: unknown) => {
      const inEffect = `the change is in effect, and ${rollsBack}`;
      throw e instanceof DriverError && e.kind === 'device'
        ? new DriverError('device', `${e.message} (the confirming commit failed: ${inEffect})`, { partial: true })
        : unanswered(e, `during '${confirmed.confirm}', the confirming commit, which may not have reached it: ${inEffect}`);
    });
  }

  /**
   * Discards what this account left uncommitted (configMode.discardOwn). A CLI that does not know
   * the command (PAN-OS before 8.0, without per-account changes) fails the push before any line
   * is typed; anything else it answers (nothing to revert, a commit in progress) is logged and
   * the push goes on: its own commit and abort are scoped to this account whatever happened here.
   */
  private async discardOwn(command: string): Promise<void> {
    const said = (await this.exec(command, false)).map((l) => l.trim()).filter(Boolean);
    if (said.some((l) => UNKNOWN_COMMAND.test(l))) {
      throw new DriverError(
        'device',
        `${this.where}: the device does not know '${command}' (${said.join(' / ')}); per-account commits need PAN-OS 8.0 or later`,
      );
    }
    if (said.some((l) => this.dialect.errorPatterns.some((re) => re.test(l)))) this.info(`'${command}' said: ${said.join(' / ')}; going on`);
  }

  /**
   * A shared candidate whose `enter` said it holds changes nobody committed: out again (not
   * aborting, which would throw them away) and refused, rather than commit them with ours.
   */
  private async refuseUncommitted(said: string[]): Promise<void> {
    const { uncommitted } = this.dialect.configMode;
    if (!uncommitted || !said.some((l) => uncommitted.test(l.trim()))) return;
    await this.leaveConfig(false);
    throw new DriverError(
      'device',
      `${this.where}: the candidate configuration already holds changes nobody committed (another session's, or a push cut off mid-way); ` +
        'not committing them with this change: commit or discard them on the device, or restore it',
    );
  }

  /**
   * Runs `fn` in the configuration mode just entered, then leaves. A device error (a refused
   * line, load or commit) aborts instead, discarding what is not committed or saved.
   */
  private async configuring(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      if (e instanceof DriverError && e.kind === 'device') await this.discardOpen();
      throw e;
    }
    await this.leaveConfig(false);
  }

  /** A dialect command with the SSH account's name in place of `{user}`. */
  private command(template: string): string {
    if (!template.includes(USER_PLACEHOLDER)) return template;
    return template.replaceAll(USER_PLACEHOLDER, cliWord(this.target.credentials.username, this.where));
  }

  /** Whether the lines typed so far, up to `line`, are in effect (a block-saving CLI: once their block is saved). */
  private saved(line: string): boolean {
    return !this.dialect.configMode.saves || !this.inConfig() || this.savesBlock(line);
  }

  /** A block-saving CLI's `next` or `end`: what it saves may rename the device (FortiOS `set hostname`), and so its prompt. */
  private savesBlock(line: string): boolean {
    return this.dialect.configMode.saves?.test(line.trim()) ?? false;
  }

  /** Puts a configuration fetched over SSH back with replace semantics, by the dialect's restore method. */
  restore(config: FetchedConfig): Promise<void> {
    return this.serialize(async () => {
      if (config.format !== 'cli') {
        throw new DriverError(
          'device',
          `${this.where}: cannot restore a ${config.format} configuration over SSH CLI (needs the text fetched via ssh)`,
        );
      }
      const r = this.dialect.restore;
      if (r.method === 'none') {
        throw new DriverError(
          'device',
          `${this.where}: the ${this.dialect.deviceType} CLI has no configuration replace over SSH; restore it over its automation transport`,
        );
      }
      this.refuseTruncated(config);
      const { commit } = this.dialect.configMode;
      switch (r.method) {
        case 'file-replace':
          await this.upload(r.file, config.text);
          await this.exec(r.command, true, { relearnHost: true, slow: true });
          return;
        case 'commit-replace':
          await this.upload(r.file, config.text);
          await this.enterConfig();
          return this.configuring(async () => {
            const said = await this.exec(r.load, true, { slow: true });
            if (!said.some((l) => r.loaded.test(l.trim()))) {
              throw new DriverError(
                'device',
                `${this.where}: '${r.load}' did not say it read the backup (${said.map((l) => l.trim()).join(' / ') || 'no output'}); ` +
                  'not committing a replace of the whole configuration with what it loaded',
              );
            }
            await this.commit(r.command, r.confirm);
          });
        case 'load-override':
          await this.enterConfig();
          return this.configuring(async () => {
            await this.loadTerminal(r.command, config.text, r.end);
            if (commit) await this.commit(this.command(commit));
          });
      }
    });
  }

  /**
   * Before anything changes: a backup that looks cut short (taken before pulls were checked, or
   * cut in a way the pull could not see) would, put back with replace semantics, remove
   * everything after the cut. This is the check that protects the device, whatever the backup's
   * origin; fetchConfig() makes the same one so that such a backup is not stored in the first place.
   */
  private refuseTruncated(config: FetchedConfig): void {
    const cut = this.dialect.truncated?.(config.text.split('\n'));
    if (cut === undefined) return;
    throw new DriverError(
      'device',
      `${this.where}: the backup looks truncated (${cut}); nothing was changed: replacing the configuration with it would remove everything after the cut`,
    );
  }

  /** Copies the backup to `file` on the device over SCP, from the privileged prompt. */
  private async upload(file: string, text: string): Promise<void> {
    if (this.level === 'config') await this.leaveConfig(false);
    this.info(`copying the backup (${Buffer.byteLength(text)} bytes) to ${file} over SCP`);
    await scpUpload(this.client, file, text, this.where, this.limits.commandTimeoutMs);
  }

  /** A method, not a field read, so that checks after an await are not narrowed away. */
  private inConfig(): boolean {
    return this.level === 'config';
  }

  /** Enters configuration mode; returns what the device said on the way in (nothing when already there, or the CLI has none). */
  private async enterConfig(): Promise<string[]> {
    const { enter } = this.dialect.configMode;
    if (enter === undefined || this.level === 'config') return [];
    const said = await this.exec(enter, true);
    if (!this.inConfig())
      throw new DriverError('protocol', `${this.where}: '${enter}' did not reach configuration mode (the prompt is at ${this.level} level)`);
    return said;
  }

  /**
   * Back to the privileged prompt: the dialect's exit, or its abort (discarding what is not
   * committed or saved) typed until the prompt is out, one open block at a time on FortiOS.
   */
  private async leaveConfig(aborting: boolean): Promise<void> {
    const { exit, abort } = this.dialect.configMode;
    const [cmds, rounds] = aborting && abort ? [abort.map((c) => this.command(c)), MAX_OPEN_BLOCKS] : [[exit], 5];
    for (let i = 0; i < rounds && this.inConfig(); i++) {
      for (const cmd of cmds) if (this.inConfig()) await this.exec(cmd, false);
    }
    if (this.inConfig()) throw new DriverError('protocol', `${this.where}: could not leave configuration mode with '${cmds.join("', '")}'`);
  }

  /**
   * After a refused line: out of configuration mode, discarding what is not committed or saved.
   * A session that cannot get out is closed, so that no later line lands in the open block
   * (FortiOS would save it with the next `end`).
   */
  private async discardOpen(): Promise<void> {
    try {
      await this.leaveConfig(true);
    } catch (err) {
      this.info(`leaving configuration mode failed: ${String(err)}; closing the session`);
      await this.close();
    }
  }

  /** `load … terminal`: the text typed without prompts, ended by `end` (Ctrl-D); errors checked in what the device said. */
  private async loadTerminal(command: string, text: string, end: string): Promise<void> {
    const nl = this.dialect.newline;
    this.shell.send(command + nl);
    for (const line of text.split('\n')) if (line.trim() !== '') this.shell.send(line + nl);
    this.shell.send(end);
    const r = await this.shell.expect({
      what: `the end of '${command}'`,
      ...this.waitLimits(true),
      until: [this.isPrompt],
      pager: true,
    });
    this.level = this.promptLevel(r.lastLine) ?? this.level;
    const bad = renderLines(r.raw, this.dialect.pager).find((l) => this.dialect.errorPatterns.some((re) => re.test(l.trim())));
    if (bad !== undefined) throw new DriverError('device', `${this.where}: the device rejected the loaded configuration: ${bad.trim()}`);
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      const closed = () => new DriverError('protocol', `${this.where}: session is closed`);
      if (this.clientClosed) {
        this.shell.fail(closed);
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.destroy();
        resolve();
      }, this.closeGraceMs);
      this.client.once('close', done);
      if (!this.shell.isBroken) this.shell.send(this.dialect.exitCommand + this.dialect.newline);
      this.shell.fail(closed);
      this.client.end();
    });
    return this.closing;
  }
}

export function createSshCliDriver(options: SshCliDriverOptions = {}): SshCliDriver {
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const closeGraceMs = options.closeGraceMs ?? 1000;
  return {
    transport: 'ssh',
    async open(target: DeviceTarget, limitsIn?: Partial<SessionLimits>, transcript?: Transcript): Promise<SshCliSessionApi> {
      const limits: SessionLimits = { ...DEFAULT_LIMITS, ...limitsIn };
      const dialect = getDialect(target.device_type);
      const where = `${target.name} (${target.host}:${target.ports.ssh})`;
      const mask = makeMasker([target.credentials.password, target.credentials.enable_password]);
      const info = (text: string) => transcript?.write('info', mask(text));
      const deadline = Date.now() + limits.connectTimeoutMs;
      info(`connecting to ${target.host}:${target.ports.ssh} as ${target.credentials.username} (dialect ${dialect.deviceType})`);
      const { client, hostKey } = await connectSsh(target, limits, where, info, options.legacyAlgorithms ?? true).catch((e: unknown) => {
        throw masked(e, mask);
      });
      let shell: CliShell | undefined;
      client.on('error', (e: Error & { level?: string }) => {
        const err =
          e.level === 'client-timeout' && /keepalive/i.test(e.message)
            ? keepaliveError(where, limits)
            : new DriverError('protocol', `${where}: ${e.message}`);
        info(err.message);
        shell?.fail(err);
      });
      let session: SshCliSession | undefined;
      try {
        const stream = await openShell(client, where, Math.max(1, deadline - Date.now()));
        shell = new CliShell(stream, where, {
          pager: dialect.pager,
          maxOutputBytes,
          sent: (t) => transcript?.write('sent', mask(t)),
          received: (t) => transcript?.write('received', mask(t)),
          info,
        });
        session = new SshCliSession({ client, hostKey, shell, dialect, target, limits, where, info, mask, closeGraceMs });
        await session.init(deadline);
        return session;
      } catch (e) {
        info(`open failed: ${(e as Error).message}`);
        if (session) await session.close();
        else client.destroy();
        throw masked(e, mask);
      }
    },
  };
}

export const sshCliDriver: SshCliDriver = createSshCliDriver();
