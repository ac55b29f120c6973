/**
 * The device side of one interactive shell: a line editor with echo, user/privileged/config
 * modes, enable with a password, a pager, an extensible command table, and the output-side
 * fault modes (slow output, disconnect mid-output).
 */
import type { Duplex } from 'node:stream';
import { CiscoConfigEditor } from './config-edit';
import type { ConfirmedCommitTimer } from './confirmed-commit';
import { FortiosBlocks } from './fortios-config';
import { JunosConfigMode, type JunosDatabase, type JunosReply } from './junos-config';
import { PanosConfigMode, type PanosCandidate } from './panos-config';
import type { Mode, Persona } from './personas';

export interface SshFaults {
  /** Every login is refused, whatever the credentials (a wrong password as the device sees it). */
  rejectAuth?: boolean;
  /** Login succeeds, the shell never prints anything. */
  hang?: boolean;
  /** The connection is dropped halfway through the first long output (≥ 1 KiB). */
  disconnectMidOutput?: boolean;
  /**
   * Every long output (≥ 1 KiB) stops after the line that ends its first half and the prompt
   * comes back: a show the device interrupted, which the client cannot tell from a whole one but
   * by its content.
   */
  cutOutput?: boolean;
  /** Output trickles: `chunkBytes` bytes every `intervalMs`. */
  slowOutput?: { chunkBytes: number; intervalMs: number };
  /** 'shell': binary and ANSI noise instead of a CLI; 'transport': noise right after the SSH version line. */
  garbage?: 'shell' | 'transport';
  /** TCP accepted, SSH version line sent only after this delay. */
  slowAcceptMs?: number;
  /** In config mode, each shell takes this many lines, then never answers again (a push that hangs). */
  stallConfigAfter?: number;
  /** A line matching `match` is taken only after `ms` of silence (a commit or a replace of a large configuration). */
  slowLine?: { match: RegExp; ms: number };
  /** Files copied over SCP are accepted and then not there (written to another path than the one read back). */
  loseUploads?: boolean;
  /** XR-like `load <file>` reads nothing and says nothing (a file read as empty). */
  silentLoad?: boolean;
  /**
   * A confirmed commit takes effect and the connection drops before its answer goes out: a change
   * that cut the management path, as the client sees it.
   */
  dropOnConfirmedCommit?: boolean;
}

export interface SimCommandContext {
  hostname: string;
  deviceType: string;
  /** Words after the matched command. */
  args: string;
  line: string;
  mode: Mode;
  now: Date;
  device: SimDeviceState;
}
export type SimCommandHandler = (ctx: SimCommandContext) => string;
export interface SimCommand {
  run: SimCommandHandler;
  /** Commands needing privileged mode fail with the device's error at the user prompt. */
  minMode?: 'user' | 'priv';
  /** Whether words after the command are accepted (passed as `args`); default true. */
  args?: boolean;
}

/** What all shells of one device share. */
export interface SimDeviceState {
  hostname: string;
  deviceType: string;
  persona: Persona;
  username: string;
  enablePassword?: string;
  faults: SshFaults;
  ignorePagerOff: boolean;
  pageLength: number;
  commands: Map<string, SimCommand>;
  /** Lines typed in config mode, in order. */
  configLog: string[];
  /** The running config without its volatile lines; setBody also follows a renamed device. */
  getBody(): string;
  setBody(text: string): void;
  /** The device's file system (flash:, bootflash:), written over SCP, read by configure replace. */
  files: Map<string, string>;
  /** The running config as shown (volatile lines rendered fresh); advances the clock. */
  renderConfig(): string;
  /** A clock that moves at least one second on every call. */
  now(): Date;
  /** Junos-like devices: the shared candidate and the commit history (made by the first configure). */
  junos?: JunosDatabase;
  /** PAN-OS-like devices: the candidate's pending changes of every administrator (made by the first configure). */
  panos?: PanosCandidate;
  /** Junos- and XR-like devices: the confirmed commit waiting for its confirmation. */
  confirmedCommit: ConfirmedCommitTimer;
}

const registry = new Map<string, Map<string, SimCommand>>();

/**
 * Adds a command to every simulated device of the given types ('*' = all), including devices
 * already running. The handler returns the output text (lines end with \n). Returns the undo,
 * which puts back what the command was before: the table is module state, and test files share
 * worker processes, so a file that overrides a command undoes it when it is done.
 */
export function registerSshCommand(
  deviceTypes: string | string[],
  command: string,
  run: SimCommandHandler,
  opts: { minMode?: 'user' | 'priv' } = {},
): () => void {
  const key = normalize(command);
  const undo: (() => void)[] = [];
  for (const t of Array.isArray(deviceTypes) ? deviceTypes : [deviceTypes]) {
    const table = registry.get(t) ?? new Map<string, SimCommand>();
    registry.set(t, table);
    const before = table.get(key);
    undo.push(() => (before ? table.set(key, before) : table.delete(key)));
    table.set(key, { run, minMode: opts.minMode });
  }
  return () => undo.forEach((u) => u());
}

const normalize = (s: string) => s.trim().split(/\s+/).join(' ');

interface Match {
  key: string;
  args: string;
}

/** IOS-style abbreviation matching: every word may be shortened to a unique prefix. */
export function matchCommand(line: string, keys: Iterable<string>): Match | 'ambiguous' | undefined {
  const words = line.trim().split(/\s+/);
  let best: Array<Match & { len: number; exact: boolean }> = [];
  for (const key of keys) {
    const kw = key.split(' ');
    if (words.length < kw.length) continue;
    let exact = true;
    let ok = true;
    for (let i = 0; i < kw.length; i++) {
      if (!kw[i].startsWith(words[i])) {
        ok = false;
        break;
      }
      if (kw[i] !== words[i]) exact = false;
    }
    if (!ok) continue;
    const m = { key, args: words.slice(kw.length).join(' '), len: kw.length, exact };
    if (best.length === 0 || m.len > best[0].len) best = [m];
    else if (m.len === best[0].len) best.push(m);
  }
  if (best.length === 0) return undefined;
  const exact = best.filter((m) => m.exact);
  if (exact.length === 1) return exact[0];
  if (best.length > 1) return 'ambiguous';
  return best[0];
}

/**
 * Writes device output with \r\n line ends. Everything written in one tick goes out as one
 * SSH packet (as a device's TCP stack would coalesce it); with `slow`, output trickles instead.
 */
export class OutputWriter {
  private queue: Buffer[] = [];
  private timer?: NodeJS.Timeout;
  private drained: Array<() => void> = [];
  private stopped = false;
  private tickParts: string[] = [];

  constructor(
    private readonly stream: Duplex,
    private readonly slow?: { chunkBytes: number; intervalMs: number },
  ) {}

  write(text: string): void {
    if (this.stopped || text === '') return;
    if (!this.slow) {
      if (this.tickParts.push(text) === 1) process.nextTick(() => this.flushTick());
      return;
    }
    this.queue.push(Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'));
    this.pump();
  }

  private flushTick(): void {
    const text = this.tickParts.join('');
    this.tickParts = [];
    if (!this.stopped && this.stream.writable) this.stream.write(Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'));
  }

  /** Calls `cb` once everything queued so far has been handed to the channel. */
  whenDrained(cb: () => void): void {
    if (this.queue.length === 0) setImmediate(cb);
    else this.drained.push(cb);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.queue = [];
  }

  private pump(): void {
    if (this.timer || this.stopped) return;
    const tick = () => {
      this.timer = undefined;
      if (this.stopped) return;
      const slow = this.slow!;
      let need = slow.chunkBytes;
      const parts: Buffer[] = [];
      while (need > 0 && this.queue.length > 0) {
        const head = this.queue[0];
        if (head.length <= need) {
          parts.push(head);
          need -= head.length;
          this.queue.shift();
        } else {
          parts.push(head.subarray(0, need));
          this.queue[0] = head.subarray(need);
          need = 0;
        }
      }
      this.stream.write(Buffer.concat(parts));
      if (this.queue.length > 0) this.timer = setTimeout(tick, slow.intervalMs);
      else for (const cb of this.drained.splice(0)) cb();
    };
    this.timer = setTimeout(tick, this.slow!.intervalMs);
  }
}

/** `load`: a Junos-like `load … terminal` reading config text until Ctrl-D. */
type InputState = 'line' | 'password' | 'paging' | 'confirm' | 'stalled' | 'closed' | 'load';

/** Device types whose config mode edits the running config with the IOS-like model of config-edit.ts. */
const EDITABLE = new Set(['vendor_ios', 'vendor_xe', 'vendor_nxos', 'vendor_eos', 'vendor_xr', 'generic', 'custom']);
/** Candidate-config CLIs: changes wait for `commit`. */
const COMMITTING = new Set(['vendor_xr']);
const OPENS_BLOCK = /^(interface|int|router|line|vlan)\s/;

interface XrCommit {
  replace: boolean;
  /** A confirmed commit: how long the device waits for the confirming commit. */
  confirmSeconds?: number;
}

/**
 * XR-like `commit [replace] [confirmed [<30-65535> | minutes <1-1024>]]` (600 seconds when no
 * time is given), or undefined for any other line, which the CLI then refuses.
 */
function parseXrCommit(line: string): XrCommit | undefined {
  const m = /^commit( replace)?( confirmed(?: (minutes )?(\d+))?)?$/.exec(line);
  if (!m) return undefined;
  const replace = m[1] !== undefined;
  if (m[2] === undefined) return { replace };
  const n = Number(m[4] ?? 600);
  const inRange = m[3] ? n >= 1 && n <= 1024 : n >= 30 && n <= 65535;
  return inRange ? { replace, confirmSeconds: m[3] ? n * 60 : n } : undefined;
}

export class CliShellSession {
  private mode: Mode;
  private context: string[] = [];
  private pagerOn = true;
  private state: InputState = 'line';
  private line = '';
  private lastWasCR = false;
  private enableTries = 0;
  private pending: string[] = [];
  private readonly persona: Persona;
  /** Lines typed in this config session (candidate CLIs), and the edited candidate. */
  private typed: string[] = [];
  private candidate?: CiscoConfigEditor;
  private configLines = 0;
  private onConfirm?: (answer: string) => void;
  /** Junos-like config mode (set/delete/commit on a shared candidate); undefined for the other CLIs. */
  private readonly junos?: JunosConfigMode;
  /** FortiOS-like: no config mode, `config …` blocks opened at the top-level prompt; undefined for the other CLIs. */
  private readonly forti?: FortiosBlocks;
  /** PAN-OS-like config mode (set/delete/commit on a candidate shared by the administrators); undefined for the other CLIs. */
  private readonly panos?: PanosConfigMode;
  private loading?: { lines: string[]; finish: (text: string) => string };

  constructor(
    private readonly dev: SimDeviceState,
    private readonly out: OutputWriter,
    /** Ends the channel (exit) or the whole connection (disconnect fault). */
    private readonly hangup: (how: 'exit' | 'drop') => void,
    /** The account this shell logged in with (the prompt's `user@`, PAN-OS's administrator). */
    private readonly user: string = dev.username,
  ) {
    this.persona = dev.persona;
    this.mode = this.persona.startMode;
    if (this.persona.deviceType === 'vendor_junos') this.junos = new JunosConfigMode(dev);
    if (this.persona.deviceType === 'vendor_fw') this.forti = new FortiosBlocks(dev);
    if (this.persona.deviceType === 'vendor_panos') this.panos = new PanosConfigMode(dev, user);
  }

  start(): void {
    this.out.write(this.persona.banner(this.dev.hostname));
    this.prompt();
  }

  close(): void {
    this.state = 'closed';
    this.out.stop();
  }

  input(data: Buffer): void {
    for (const ch of data.toString('utf8')) {
      if (this.state === 'closed') return;
      if (this.state === 'paging') {
        this.pagerKey(ch);
        continue;
      }
      if (ch === '\r' || ch === '\n') {
        if (ch === '\n' && this.lastWasCR) {
          this.lastWasCR = false;
          continue;
        }
        this.lastWasCR = ch === '\r';
        const l = this.line;
        this.line = '';
        this.out.write('\n');
        this.execute(l);
        continue;
      }
      this.lastWasCR = false;
      if (ch === '\x7f' || ch === '\b') {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          if (this.state === 'line') this.out.write('\b \b');
        }
      } else if (ch === '\x03') {
        this.line = '';
        this.state = 'line';
        this.out.write('^C\n');
        this.prompt();
      } else if (ch === '\x04' && this.state === 'load') {
        if (this.line !== '') this.loading!.lines.push(this.line);
        this.line = '';
        this.endLoad();
      } else if ((ch === '?' || ch === '\t') && this.state === 'line' && this.persona.lineHelp !== undefined) {
        this.helpKey(ch);
      } else if (ch === '\x1a' && this.mode === 'config') {
        this.line = '';
        this.out.write('^Z\n');
        this.leaveConfig();
        this.prompt();
      } else if (ch >= ' ') {
        this.line += ch;
        if (this.state === 'line' || this.state === 'load') this.out.write(ch);
      }
    }
  }

  /**
   * The line editor's keys an IOS-like CLI acts on at once instead of taking them into the line:
   * `?` prints help and the line again, a tab completes the word (here: nothing to complete, a
   * bell). Why a configuration is never typed back into such a CLI: it would lose both.
   */
  private helpKey(ch: string): void {
    if (ch === '\t') return this.out.write('\x07');
    this.out.write(`?\n${this.persona.lineHelp}\n${this.promptText()}${this.line}`);
  }

  /** Runs one command non-interactively (SSH exec channel): privileged, no pager. */
  runOnce(line: string): string {
    this.mode = 'priv';
    this.pagerOn = false;
    return this.commandOutput(line.trim()) ?? this.persona.error(line, 0);
  }

  private promptText(): string {
    const p = this.persona;
    return p.prompt(this.dev.hostname, this.user, this.mode, this.context.at(-1) ?? '');
  }

  private prompt(): void {
    this.out.write((this.persona.beforePrompt?.(this.mode, this.context.at(-1) ?? '') ?? '') + this.promptText());
  }

  private execute(raw: string, waited = false): void {
    if (this.state === 'stalled') return;
    const slow = this.dev.faults.slowLine;
    if (!waited && this.state === 'line' && slow?.match.test(raw.trim())) return void setTimeout(() => this.execute(raw, true), slow.ms);
    const armed = this.dev.confirmedCommit.armed;
    this.executeLine(raw);
    if (this.dev.faults.dropOnConfirmedCommit && this.dev.confirmedCommit.armed > armed) this.drop();
  }

  /** The connection drops at once: what this tick wrote (the answer to the line just taken) is never sent. */
  private drop(): void {
    this.state = 'closed';
    this.out.stop();
    this.hangup('drop');
  }

  private executeLine(raw: string): void {
    const line = raw.trim();
    if (this.state === 'load') return void this.loading!.lines.push(raw);
    if (this.state === 'confirm') {
      this.state = 'line';
      const answer = this.onConfirm;
      this.onConfirm = undefined;
      answer?.(line);
      return;
    }
    if (this.state === 'password') {
      this.state = 'line';
      if (line === this.dev.enablePassword) {
        this.mode = 'priv';
        this.enableTries = 0;
      } else if (++this.enableTries < 3) {
        this.state = 'password';
        this.out.write('Password: ');
        return;
      } else {
        this.enableTries = 0;
        this.out.write('% Bad secrets\n\n');
      }
      this.prompt();
      return;
    }
    if (line === '') return this.prompt();
    if (this.mode === 'config') return this.configMode(raw);

    const p = this.persona;
    const replace = /^configure replace (\S+)(.*)$/.exec(line);
    if (replace && p.configReplace && this.mode === 'priv') return this.configureReplace(line, replace[1], replace[2]);
    // FortiOS-style: no configuration mode; `config <path>` opens a block at the top-level prompt.
    if (this.forti && /^config\s+\S/.test(line)) return this.fortiLine(line);
    const enter = p.configEnter;
    const builtins = ['exit', 'quit', 'logout', 'disable', ...Object.keys(p.pagerOff)];
    if (enter) builtins.push(enter.command);
    if (p.enableCommand) builtins.push(p.enableCommand);
    const m = matchCommand(line, builtins);
    if (m && m !== 'ambiguous') {
      if (m.key === 'exit' || m.key === 'quit' || m.key === 'logout') {
        this.state = 'closed';
        this.out.whenDrained(() => this.hangup('exit'));
        return;
      }
      if (m.key === p.enableCommand) {
        if (this.mode === 'priv' || this.dev.enablePassword === undefined) this.mode = 'priv';
        else {
          this.state = 'password';
          this.out.write('Password: ');
          return;
        }
        return this.prompt();
      }
      if (m.key === 'disable') {
        if (p.enableCommand) this.mode = 'user';
        return this.prompt();
      }
      if (m.key === enter?.command) {
        if (p.enableCommand && this.mode === 'user') return this.reply(p.error(line, this.promptText().length));
        this.mode = 'config';
        this.context = [enter.context];
        this.typed = [];
        this.candidate = EDITABLE.has(p.deviceType) ? CiscoConfigEditor.parse(this.dev.getBody()) : undefined;
        this.out.write(this.junos ? this.junos.enter() : enter.text);
        return this.prompt();
      }
      if (!this.dev.ignorePagerOff) this.pagerOn = false;
      return this.reply(p.pagerOff[m.key]);
    }
    const text = m === 'ambiguous' ? `% Ambiguous command:  "${line}"\n` : this.commandOutput(line);
    this.reply(text ?? p.error(line, this.promptText().length));
  }

  /** Output of a show command, or undefined when the device does not know it (at this level). */
  private commandOutput(line: string): string | undefined {
    const p = this.persona;
    const table = new Map<string, SimCommand>();
    const add = (src?: Map<string, SimCommand>) => src?.forEach((c, k) => table.has(k) || table.set(k, c));
    add(this.dev.commands);
    add(registry.get(this.dev.deviceType));
    add(registry.get('*'));
    if (!table.has(p.showConfig)) table.set(p.showConfig, { run: (ctx) => ctx.device.renderConfig(), minMode: 'priv', args: false });
    if (!table.has(p.showVersion.command)) {
      table.set(p.showVersion.command, { run: (ctx) => p.showVersion.text(ctx.hostname, ctx.now), args: false });
    }
    const m = matchCommand(line, table.keys());
    if (!m || m === 'ambiguous') return undefined;
    const cmd = table.get(m.key)!;
    if (cmd.minMode === 'priv' && this.mode === 'user') return undefined;
    if (cmd.args === false && m.args !== '') return undefined;
    const now = this.dev.now();
    const text = cmd.run({
      hostname: this.dev.hostname,
      deviceType: this.dev.deviceType,
      args: m.args,
      line,
      mode: this.mode,
      now,
      device: this.dev,
    });
    return (p.outputPrefix?.(now) ?? '') + text;
  }

  private configMode(raw: string): void {
    const p = this.persona;
    const line = raw.trim();
    if (this.forti) return this.fortiLine(line);
    this.dev.configLog.push(line);
    if (this.junos) return this.junosLine(line);
    const end = matchCommand(line, p.configEnd);
    if (end && end !== 'ambiguous' && end.args === '') {
      // A candidate CLI leaving with uncommitted changes discards them (the real one asks first).
      this.leaveConfig();
      return this.prompt();
    }
    if (this.panos) return this.panosLine(line);
    if (EDITABLE.has(p.deviceType)) {
      if (this.stalls()) return;
      if (this.editLine(raw, line)) return;
    }
    const state = { context: this.context, pagerOn: this.pagerOn };
    const said = p.configLine?.(line, state);
    if (!this.dev.ignorePagerOff) this.pagerOn = state.pagerOn;
    if (this.context.length === 0) this.leaveConfig();
    if (said) this.out.write(said);
    this.prompt();
  }

  /** The stall fault: the device takes this config line, then never answers again (a dying agent's view of a hung push). */
  private stalls(): boolean {
    const stall = this.dev.faults.stallConfigAfter;
    if (stall === undefined || ++this.configLines <= stall) return false;
    this.state = 'stalled';
    return true;
  }

  /** Junos-like config mode: the line goes to the shared candidate (see junos-config.ts). */
  private junosLine(line: string): void {
    if (this.stalls()) return;
    this.junosReply(this.junos!.line(line, this.promptText().length));
  }

  /** PAN-OS-like config mode: the line goes to the shared candidate (see panos-config.ts). */
  private panosLine(line: string): void {
    if (this.stalls()) return;
    this.reply(this.panos!.line(line) ?? this.persona.error(line, this.promptText().length));
  }

  /** FortiOS-like: the line goes to the open blocks (see fortios-config.ts); the prompt shows the innermost. */
  private fortiLine(line: string): void {
    this.dev.configLog.push(line);
    if (this.stalls()) return;
    const blocks = this.forti!;
    const r = blocks.line(line);
    if (r.pager !== undefined && !this.dev.ignorePagerOff) this.pagerOn = r.pager;
    this.mode = blocks.isOpen ? 'config' : 'priv';
    this.context = blocks.isOpen ? [blocks.where()] : [];
    this.out.write(r.say);
    this.prompt();
  }

  private junosReply(r: JunosReply): void {
    this.out.write(r.say);
    if (r.next === 'ask') {
      this.state = 'confirm';
      this.onConfirm = (answer) => this.junosReply(r.answer(answer));
      return;
    }
    if (r.next === 'load') {
      this.state = 'load';
      this.loading = { lines: [], finish: r.finish };
      return;
    }
    if (r.next === 'run') return this.reply(this.commandOutput(r.command) ?? this.persona.error(r.command, this.promptText().length + 4));
    if (r.next === 'leave') {
      this.leaveConfig();
      this.out.write('Exiting configuration mode\n');
    } else this.context = [this.junos!.where()];
    this.prompt();
  }

  /** Ctrl-D after `load … terminal`: the text typed so far is loaded. */
  private endLoad(): void {
    const { lines, finish } = this.loading!;
    this.loading = undefined;
    this.state = 'line';
    this.junosReply({ say: finish(lines.join('\n')) });
  }

  private leaveConfig(): void {
    this.mode = 'priv';
    this.context = [];
    this.candidate = undefined;
    this.typed = [];
  }

  /**
   * IOS-like config mode that changes the running config (or the candidate of a commit CLI).
   * Returns true when it has answered the line itself (errors, commit, abort, load).
   */
  private editLine(raw: string, line: string): boolean {
    const p = this.persona;
    const committing = COMMITTING.has(p.deviceType);
    const load = /^load\s+(\S+)$/.exec(line);
    if (committing && load) return (this.loadFile(load[1]), true);
    if (committing && line === 'abort') {
      this.leaveConfig();
      return (this.prompt(), true);
    }
    const commit = committing ? parseXrCommit(line) : undefined;
    if (commit) return (this.commit(commit), true);
    if (this.take(raw)) return false;
    this.reply(p.error(line, this.promptText().length));
    return true;
  }

  /**
   * XR-like commit: the candidate merged into the running config, or with `replace` made the whole
   * running config once the question is answered yes; `confirmSeconds`: a confirmed commit.
   */
  private commit({ replace, confirmSeconds }: XrCommit): void {
    const trial = this.dev.confirmedCommit;
    // XR: a pending trial is confirmed only by the session that armed it; others may not commit.
    if (trial.pending && trial.owner !== this) {
      return this.reply('% Cannot commit because there is an unexpired trial/rollback session. Please try again later.\n');
    }
    if (!replace) {
      // Nothing typed (a confirming commit, say): the running config stays exactly as it is.
      this.activate(this.typed.length > 0 ? this.candidate?.text() : undefined, confirmSeconds);
      return this.prompt();
    }
    this.out.write(
      'This commit will replace or remove the entire running configuration. This\noperation can be service affecting.\nDo you wish to proceed? [no]: ',
    );
    this.state = 'confirm';
    const typed = this.typed;
    this.onConfirm = (answer) => {
      if (/^y(es)?$/i.test(answer)) this.activate([...typed, 'end'].join('\n') + '\n', confirmSeconds);
      this.prompt();
    };
  }

  /**
   * A commit of a candidate CLI: `text` (undefined: unchanged) becomes the running config and the
   * candidate starts again from it. A confirmed one (`confirmSeconds`) leaves the way back to the
   * config before it pending; any other confirms what is pending.
   */
  private activate(text: string | undefined, confirmSeconds?: number): void {
    const trial = this.dev.confirmedCommit;
    const before = this.dev.getBody();
    if (confirmSeconds === undefined) trial.confirm();
    else trial.arm(confirmSeconds, () => this.dev.setBody(before), this);
    if (text !== undefined) this.dev.setBody(text);
    this.candidate = CiscoConfigEditor.parse(this.dev.getBody());
    this.typed = [];
  }

  /**
   * One line into the candidate (a commit CLI, which also keeps it for `commit replace`) or the
   * running config; false when the CLI does not know it. An indented line (pasted or loaded
   * config) belongs to the block above it; others are checked by keyword.
   */
  private take(raw: string): boolean {
    const line = raw.trim();
    const editor = (this.candidate ??= CiscoConfigEditor.parse(this.dev.getBody()));
    if (line === '' || line.startsWith('!') || line === 'exit') {
      editor.apply(line, { opensBlock: false, inSubMode: false });
    } else {
      const indented = /^\s/.test(raw);
      const inSub = indented ? editor.hasBlock() : this.context.length > 1 && CiscoConfigEditor.subLine(line);
      if (!indented && !CiscoConfigEditor.known(line, inSub)) return false;
      if (this.context.length > 1 && !inSub && !OPENS_BLOCK.test(line)) this.context.splice(1);
      editor.apply(line, { opensBlock: OPENS_BLOCK.test(line), inSubMode: inSub });
    }
    if (COMMITTING.has(this.persona.deviceType)) this.typed.push(raw.trimEnd());
    else this.dev.setBody(editor.text());
    return true;
  }

  /**
   * XR-like `load <file>` in configuration mode: the file's lines up to its `end` go into the
   * candidate as they are (nothing is typed, so `?` and tabs stay text); lines the CLI does not
   * know are listed as XR lists them, the others are loaded.
   */
  private loadFile(file: string): void {
    if (this.dev.faults.silentLoad) return this.reply('');
    const text = this.dev.files.get(file);
    // XR's own words (Cisco's NSO XR driver checks for them); no `%`, unlike IOS's configure replace.
    if (text === undefined) return this.reply(`Couldn't open file ${file}\n`);
    const refused: string[] = [];
    for (const raw of text.replace(/\n$/, '').split('\n')) {
      if (raw.trim() === 'end') break;
      if (!this.take(raw)) refused.push(`${raw.trim()}\n!!% Invalid input detected at '^' marker.\n`);
    }
    const bytes = Buffer.byteLength(text);
    let said = `Loading.\n${bytes} bytes parsed in 1 sec (${bytes})bytes/sec\n`;
    if (refused.length > 0) {
      said +=
        'Syntax/Authorization errors in one or more commands.!! CONFIGURATION FAILED DUE TO SYNTAX/AUTHORIZATION ERRORS\n' +
        `${refused.join('')}\nPlease use "show configuration failed load [detail]" to view the errors\n`;
    }
    this.reply(said);
  }

  /** `configure replace <file> [option …]`: the file becomes the running config; an option this CLI lacks is refused. */
  private configureReplace(line: string, file: string, options: string): void {
    const { options: known, done } = this.persona.configReplace!;
    if (options.split(/\s+/).some((w) => w !== '' && !known.includes(w))) return this.reply(this.persona.error(line, this.promptText().length));
    const text = this.dev.files.get(file);
    if (text === undefined) return this.reply(`%Error opening ${file} (No such file or directory)\n`);
    this.dev.setBody(text);
    this.reply(done);
  }

  /** Command output through the pager and the output faults, then the prompt. */
  private reply(text: string): void {
    if (this.dev.faults.cutOutput && text.length >= 1024) text = text.slice(0, text.lastIndexOf('\n', text.length / 2) + 1);
    if (this.dev.faults.disconnectMidOutput && text.length >= 1024) {
      this.out.write(text.slice(0, Math.floor(text.length / 2)));
      this.state = 'closed';
      this.out.whenDrained(() => this.hangup('drop'));
      return;
    }
    const lines = text.split('\n');
    const page = this.dev.pageLength;
    if (!this.pagerOn || page <= 0 || lines.length - 1 <= page) {
      this.out.write(text);
      return this.prompt();
    }
    this.out.write(lines.slice(0, page).join('\n') + '\n' + this.persona.pager.prompt);
    this.pending = lines.slice(page);
    this.state = 'paging';
  }

  private pagerKey(ch: string): void {
    let n: number;
    if (ch === ' ') n = this.dev.pageLength;
    else if (ch === '\r' || ch === '\n') n = 1;
    else if (ch === 'q' || ch === 'Q' || ch === '\x03') n = 0;
    else return;
    this.out.write(this.persona.pager.erase);
    if (n === 0) this.pending = [''];
    // `pending` always ends with '' (the text ended with \n), so length - 1 lines remain.
    if (this.pending.length - 1 > n) {
      this.out.write(this.pending.slice(0, n).join('\n') + '\n' + this.persona.pager.prompt);
      this.pending = this.pending.slice(n);
      return;
    }
    this.out.write(this.pending.join('\n'));
    this.pending = [];
    this.state = 'line';
    this.prompt();
  }
}
