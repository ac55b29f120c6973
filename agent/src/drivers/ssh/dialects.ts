/**
 * SSH CLI dialects as data: one entry per API.md device_type. The driver knows nothing about
 * any maker; everything that differs between CLIs lives here.
 *
 * Prompt patterns are matched against the last line of output after terminal cleaning (ANSI
 * removed, carriage returns and backspaces applied, trailing blanks trimmed). Each prompt
 * pattern has a named group `host`; once the first prompt is seen the driver only accepts
 * prompts with the same `host`, so a config line that happens to end in `#` is not a prompt.
 */

import { dropMatching, trimBlankLines } from './text';

export interface PromptPatterns {
  /** Unprivileged exec level (IOS `R1>`). */
  user: RegExp;
  /** Privileged / operational level where show commands and the config are available. */
  privileged: RegExp;
  /** Configuration mode. */
  config: RegExp;
}

export interface SshDialect {
  deviceType: string;
  description: string;
  prompts: PromptPatterns;
  /** Sent in order after login (and after enable); errors are ignored. */
  pagerOff: string[];
  showConfig: string;
  /** A show command every device of the dialect answers (used for checks and discovery). */
  showVersion: string;
  enable: {
    /** Whether a session that lands at the user prompt must run the enable command. */
    needed: boolean;
    command: string;
    passwordPrompt: RegExp;
    /** Lines that mean the enable password was refused. */
    failure: RegExp[];
  };
  configMode: {
    /**
     * Enters configuration mode. Absent: the CLI has none (FortiOS): the lines are typed at the
     * privileged prompt and open and close their own blocks (`config …` … `end`).
     */
    enter?: string;
    exit: string;
    /** Makes the typed changes take effect (candidate-config CLIs); absent: every line takes effect at once. */
    commit?: string;
    /**
     * Where the CLI has one, every commit (a push's, and a restore's: `commit`, XR's `commit
     * replace`) is a confirmed commit followed by the confirming one; see ConfirmedCommit.
     */
    confirmedCommit?: ConfirmedCommit;
    /**
     * After a refused line: throws away what is not committed or saved, sent in order and again
     * until the prompt is out of configuration mode. A commit CLI leaves at once; FortiOS's `abort`
     * leaves one open block, so a nested edit takes one per level. `exit` never follows an abort:
     * FortiOS's `end` would save the half-typed block.
     */
    abort?: string[];
    /**
     * CLIs that save block by block (FortiOS): a line is on the device only once a line matching
     * this (`next`, `end`) or the return to the privileged prompt has saved its block; until then
     * the abort discards it. Absent: a line takes effect when it is typed (or at the commit).
     */
    saves?: RegExp;
    /**
     * A line `enter` prints when the candidate already holds changes nobody committed (a shared
     * candidate: another session's edits, or a push cut off mid-way). apply() then refuses rather
     * than commit them along with its own, and leaves them alone.
     */
    uncommitted?: RegExp;
    /**
     * A candidate shared by all administrators but kept per account (PAN-OS): typed before the
     * lines, it discards what this account left uncommitted (a push whose session died before its
     * commit or abort), so that `commit` and `abort`, scoped to the account too, take exactly this
     * push's lines and never another administrator's.
     */
    discardOwn?: string;
  };
  /** How SshCliSession.restore() puts a fetched configuration back with replace semantics. */
  restore: RestoreMethod;
  /**
   * Why a configuration this CLI printed looks cut short, or undefined when it looks whole (see
   * TruncationCheck). Absent: the CLI's output has no mark of its end to check.
   */
  truncated?: TruncationCheck;
  /** A line of output matching one of these means the device refused the command. */
  errorPatterns: RegExp[];
  /**
   * Pager prompts ("press a key for more"). Matched at the tail of streaming output to send a
   * space, and removed (globally) from the collected output.
   */
  pager: RegExp[];
  /** Lines dropped from every command's output (status lines the CLI prints before a prompt). */
  noiseLines: RegExp[];
  /** Lines dropped from the fetched configuration so an unchanged device hashes the same. */
  volatileLines: RegExp[];
  /** What Enter sends. */
  newline: string;
  /** Polite way to leave the CLI on close. */
  exitCommand: string;
}

/**
 * A commit the device undoes by itself unless a second commit confirms it in time (Junos and
 * IOS-XR `commit confirmed`). A change that cuts the management path (a filter on lo0, an ACL on
 * the management interface, a wrong route) kills the session before the confirming commit, and
 * the device goes back to its previous configuration on its own; after a plain commit it would
 * stay unreachable for good, and the agent could not even restore it.
 */
export interface ConfirmedCommit {
  /** Typed after a commit command to make it a confirmed one: `commit confirmed 2`, `commit replace confirmed 120`. */
  option: string;
  /** The commit that confirms it (one with nothing left to commit confirms and changes nothing). */
  confirm: string;
  /** The rollback window as a message says it: `2 minutes`. */
  window: string;
}

/**
 * How long a confirmed commit waits for its confirming commit before the device rolls it back:
 * what a device cut off by a change stays cut off before it is back on its previous
 * configuration. The confirming commit is typed as soon as the confirmed one answers, but on
 * Junos it is a full commit of the configuration, as long as the first on a large one; the
 * window must outlast the agent's wait for it (SessionLimits.commitTimeoutMs, 2 minutes), or
 * the device could roll back a change the agent then reports as made. Junos counts in whole
 * minutes, XR in seconds (30 to 65535; 30 to 300 on older releases).
 */
export const CONFIRMED_COMMIT_WINDOW_S = 300;

const JUNOS_CONFIRMED: ConfirmedCommit = {
  option: `confirmed ${CONFIRMED_COMMIT_WINDOW_S / 60}`,
  confirm: 'commit',
  window: `${CONFIRMED_COMMIT_WINDOW_S / 60} minutes`,
};

const XR_CONFIRMED: ConfirmedCommit = {
  option: `confirmed ${CONFIRMED_COMMIT_WINDOW_S}`,
  confirm: 'commit',
  window: `${CONFIRMED_COMMIT_WINDOW_S} seconds`,
};

/**
 * Commands of a dialect may name the SSH account as `{user}` (PAN-OS's `commit partial admin
 * {user}`); the session puts the login name of the device's credentials there.
 */
export const USER_PLACEHOLDER = '{user}';

/**
 * Replace strategies of CLIs (never a replay of the backup lines, which would keep what the
 * deployment added):
 * - `file-replace`: the backup is copied to the device over SCP (same SSH connection) and
 *   `command` (`configure replace <file> force` style) makes it the running config.
 * - `commit-replace`: the backup is copied over SCP as for file-replace, then in configuration
 *   mode `load` (`load <file>`) reads it into the empty candidate and `command` (`commit
 *   replace`, made a confirmed commit where the dialect has one) swaps the whole running config;
 *   `confirm` answers the device's "are you sure" question. Never typed: the CLI would take a `?` for a help request and a tab for completion,
 *   and the restored config would differ from the backup.
 * - `load-override`: in configuration mode `command` (`load override terminal`) takes the
 *   backup as raw text ending with `end` (Ctrl-D), then the dialect's commit (confirmed where it can be).
 * - `none`: the CLI offers no replace; restore() fails with a clear message.
 */
export type RestoreMethod =
  | { method: 'file-replace'; file: string; command: string }
  | { method: 'commit-replace'; file: string; load: string; loaded: RegExp; command: string; confirm?: { prompt: RegExp; answer: string } }
  | { method: 'load-override'; command: string; end: string }
  | { method: 'none' };

/**
 * A replace makes the device's configuration the backup, so a backup cut short (a session that
 * lost the end of the output, a show interrupted before it was done) would remove everything
 * after the cut. A check looks at the CLI's own mark of a complete output and answers why the
 * lines look cut short, or undefined. A cut that happens to fall just where a complete config
 * could end (between two top-level Junos statements) passes: the mark is all the CLI gives.
 */
export type TruncationCheck = (lines: string[]) => string | undefined;

const lastLine = (lines: string[]): string | undefined => lines.findLast((l) => l.trim() !== '')?.trim();

/** IOS, IOS-XE, IOS-XR and EOS end every `show running-config` with a line `end`; an ASA (often typed vendor_ios) with `: end`. */
const endsWithEnd: TruncationCheck = (lines) =>
  /^(: )?end$/.test(lastLine(lines) ?? '') ? undefined : "it does not end with the line 'end' that ends every complete one";

/**
 * Junos has no end line, but its statements nest in braces: a text cut inside a block leaves one
 * open, and one cut mid-line ends without the `}` or `;` that ends every statement. Braces and
 * semicolons in quoted strings, `#` comments and `/* … *\/` annotations do not count.
 */
const bracesClose: TruncationCheck = (lines) => {
  let depth = 0;
  let inComment = false;
  let last = '';
  for (const line of lines) {
    const code = junosCode(line, inComment);
    inComment = code.inComment;
    for (const ch of code.text) {
      if (ch === '{') depth++;
      else if (ch === '}' && --depth < 0) return "a '}' closes a block that was never opened";
    }
    if (code.text.trim() !== '') last = code.text.trim();
  }
  if (depth > 0) return `${depth} block(s) are still open at its end`;
  return /[};]$/.test(last) ? undefined : "its last statement ends without '}' or ';'";
};

/**
 * A Junos line without its quoted strings, `#` comment and annotations; `inComment`: inside a
 * `/* … *\/` spanning lines. Both start a word (an annotation its line): `ge-0/0/*` is a name.
 */
function junosCode(line: string, inComment: boolean): { text: string; inComment: boolean } {
  let text = '';
  let i = 0;
  while (i < line.length) {
    if (inComment || (text.trim() === '' && line.startsWith('/*', i))) {
      const end = line.indexOf('*/', inComment ? i : i + 2);
      inComment = end < 0;
      i = inComment ? line.length : end + 2;
    } else if (line[i] === '#' && (i === 0 || /\s/.test(line[i - 1]))) break;
    else if (line[i] === '"') i = closingQuote(line, i) + 1;
    else text += line[i++];
  }
  return { text, inComment };
}

/** The index of the `"` that closes the string opened at `open` (backslash escapes skipped), or the line's end. */
function closingQuote(line: string, open: number): number {
  let i = open + 1;
  while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1;
  return i;
}

const fileReplace = (file: string, force = true): RestoreMethod => ({
  method: 'file-replace',
  file,
  command: `configure replace ${file}${force ? ' force' : ''}`,
});

const XR_RESTORE_FILE = 'harddisk:/switchboard-restore.cfg';

const HOST = String.raw`(?<host>[A-Za-z0-9_.\-/:@]{1,80})`;

/** Shared by the IOS-like dialects. */
const CISCO_LIKE_ERRORS = [
  /^% ?Invalid input/,
  /^% ?Invalid (command|parameter|number|ip address|IP address)/,
  /^% ?Incomplete command/,
  /^% ?Ambiguous command/,
  /^% ?Unknown command/,
  /^% ?Unrecognized command/,
  /^% ?Bad (IP address|mask|secrets)/,
  /^% ?Authorization failed/,
  /^% ?Permission denied/,
  /^% ?Error:/i,
  /^%Error (opening|copying|parsing)/i,
  // IOS refusing an address that overlaps another interface's, and a command the platform does not have.
  /^% ?\S+ overlaps with /,
  /^% ?Unavailable command/,
];

const COMMON_PAGERS = [/ ?--More--/, /<--- More --->/];

/**
 * Lines that change on every pull of an unchanged device, whatever the dialect: uptime, the
 * clock-period NTP writes back, the "Load for … / Time source is …" pair IOS and NX-OS print
 * before every output under `exec prompt timestamp`, and the ASA (generic dialect) checksum and
 * save stamp.
 */
const COMMON_VOLATILE = [
  /^\S+ uptime is \d+ .*$/,
  /^ntp clock-period \d+$/,
  /^Load for five secs: .*$/,
  /^Time source is .*$/,
  /^Cryptochecksum: ?[0-9a-f]+$/i,
  /^: Written by .*$/,
];

const ENABLE_DEFAULTS = {
  command: 'enable',
  passwordPrompt: /[Pp]assword: ?$/,
  failure: [/^% ?(Access denied|Bad secrets|Bad passwords|Authorization failed|Permission denied)/],
};

const iosVolatile = [
  /^Building configuration\.\.\.$/,
  /^Current configuration ?: ?\d+ bytes$/,
  /^! Last configuration change at .*$/,
  /^! NVRAM config last updated at .*$/,
  /^! No configuration change since last restart$/,
  /^! Time: .*$/,
  ...COMMON_VOLATILE,
];

/** IOS-like defaults (`name>`, `name#`, `name(config)#`, terminal length 0, show running-config). */
function ciscoLike(deviceType: string, description: string, overrides: Partial<SshDialect> = {}): SshDialect {
  return {
    deviceType,
    description,
    prompts: {
      user: new RegExp(String.raw`^${HOST}>$`),
      privileged: new RegExp(String.raw`^${HOST}#$`),
      config: new RegExp(String.raw`^${HOST}\(conf[^)]*\)#$`),
    },
    pagerOff: ['terminal length 0', 'terminal width 0'],
    showConfig: 'show running-config',
    showVersion: 'show version',
    enable: { needed: true, ...ENABLE_DEFAULTS },
    configMode: { enter: 'configure terminal', exit: 'end' },
    restore: fileReplace('flash:switchboard-restore.cfg'),
    truncated: endsWithEnd,
    errorPatterns: CISCO_LIKE_ERRORS,
    pager: COMMON_PAGERS,
    noiseLines: [],
    volatileLines: iosVolatile,
    newline: '\n',
    exitCommand: 'exit',
    ...overrides,
  };
}

/** Operational-mode CLIs: `user@name>` is where show commands run, `user@name#` is configure. */
const OPERATIONAL_PROMPTS: PromptPatterns = {
  user: new RegExp(String.raw`^${HOST}>$`),
  privileged: new RegExp(String.raw`^${HOST}>$`),
  config: new RegExp(String.raw`^${HOST}#$`),
};

const NO_ENABLE = { needed: false, ...ENABLE_DEFAULTS };

const generic = ciscoLike('generic', 'Generic CLI: `name>` / `name#`, terminal length 0, show running-config', {
  prompts: {
    user: new RegExp(String.raw`^${HOST}>$`),
    privileged: new RegExp(String.raw`^${HOST} ?[#$%]$`),
    config: new RegExp(String.raw`^${HOST}\(conf[^)]*\)#$`),
  },
  pagerOff: ['terminal length 0'],
  enable: NO_ENABLE,
  // Any CLI: some end their config with `end`, some (`: end`, none at all) do not; a site that knows
  // its boxes sets a check with registerDialect().
  truncated: undefined,
  errorPatterns: [...CISCO_LIKE_ERRORS, /^(syntax error|unknown command|invalid command|command not found)\b/i, /^error: /i],
  pager: [...COMMON_PAGERS, /-- ?[Mm]ore ?--/],
  volatileLines: [...iosVolatile, /^!Time: .*$/, /^## Last (commit|changed): .*$/],
});

const DIALECTS: Record<string, SshDialect> = {
  vendor_ios: ciscoLike('vendor_ios', 'IOS-like: enable, terminal length 0, show running-config'),
  vendor_xe: ciscoLike('vendor_xe', 'IOS-XE-like: as IOS'),
  vendor_nxos: ciscoLike('vendor_nxos', 'NX-OS-like: lands privileged, terminal length 0', {
    pagerOff: ['terminal length 0', 'terminal width 511'],
    enable: NO_ENABLE,
    restore: fileReplace('bootflash:switchboard-restore.cfg', false),
    // NX-OS's `show running-config` has no `end` line nor any other mark of its end: nothing to check.
    truncated: undefined,
    // NX-OS also refuses without a `%`: `ERROR: VLAN 4094 is reserved …`.
    errorPatterns: [...CISCO_LIKE_ERRORS, /^Syntax error while parsing/, /^Configure replace failed/i, /^ERROR: /],
    volatileLines: [
      /^!Command: show running-config.*$/,
      /^!Running configuration last done at: .*$/,
      /^! ?Time: .*$/,
      /^!NVRAM config last updated at .*$/,
      ...COMMON_VOLATILE,
    ],
  }),
  vendor_xr: ciscoLike('vendor_xr', 'IOS-XR-like: RP/0/RP0/CPU0:name# prompt, timestamp before every output', {
    enable: NO_ENABLE,
    configMode: { enter: 'configure terminal', exit: 'end', commit: 'commit', confirmedCommit: XR_CONFIRMED, abort: ['abort'] },
    // `harddisk:` exists on 32- and 64-bit XR alike; `load` reads the file up to its `end` line.
    restore: {
      method: 'commit-replace',
      file: XR_RESTORE_FILE,
      load: `load ${XR_RESTORE_FILE}`,
      // `commit replace` of a candidate the load left empty (a file not where it was copied, or not
      // read) would wipe the router: the load must say it parsed the file's bytes.
      loaded: /^0*[1-9]\d* bytes parsed/,
      command: 'commit replace',
      confirm: { prompt: /Do you wish to proceed\? ?\[no\]: ?$/, answer: 'yes' },
    },
    // A `load` that could not parse some lines says so first, before `!! CONFIGURATION FAILED …` and the lines.
    errorPatterns: [
      ...CISCO_LIKE_ERRORS,
      /^% ?Failed to commit/,
      /^(% ?)?Syntax\/Authorization errors in one or more commands/,
      /^Couldn't open file/,
      // Another session's confirmed commit is pending: only that session may confirm it, nobody else commit.
      /^% ?Cannot commit/,
    ],
    noiseLines: [
      // XR prints the time before the output of every exec command.
      /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}(\.\d+)? \S+$/,
    ],
    volatileLines: [/^Building configuration\.\.\.$/, /^!! Last configuration change at .*$/, ...COMMON_VOLATILE],
  }),
  vendor_junos: ciscoLike('vendor_junos', 'Junos-like: user@name> operational, user@name# configure, curly config', {
    prompts: OPERATIONAL_PROMPTS,
    pagerOff: ['set cli screen-length 0', 'set cli screen-width 0'],
    showConfig: 'show configuration',
    enable: NO_ENABLE,
    configMode: {
      enter: 'configure',
      exit: 'exit configuration-mode',
      commit: 'commit',
      confirmedCommit: JUNOS_CONFIRMED,
      abort: ['rollback 0', 'exit configuration-mode'],
      uncommitted: /^The configuration has been changed but not committed/,
    },
    restore: { method: 'load-override', command: 'load override terminal', end: '\x04' },
    truncated: bracesClose,
    // A failed commit prints its reason (`Missing mandatory statement: 'class'`) before `error: configuration
    // check-out failed`, and a refused `load … terminal` statement `terminal:<line>:(<col>) syntax error: <word>`
    // before the bare `syntax error`: listed so the message names the first, more useful line.
    errorPatterns: [
      /^syntax error/,
      /^unknown command\.?$/,
      /^error: /,
      /^missing argument\.?$/,
      /^invalid value/,
      /^Missing mandatory statement/,
      /^terminal:\d+:\(\d+\) /,
    ],
    pager: [/---\(more( \d+%)?\)---/],
    noiseLines: [/^\{(master|backup|primary|secondary|linecard)(:\d+)?\}$/, /^\[edit[^\]]*\]$/],
    volatileLines: [/^## Last (commit|changed): .*$/, ...COMMON_VOLATILE],
  }),
  vendor_eos: ciscoLike('vendor_eos', 'EOS-like: enable, terminal length 0, show running-config', {
    pagerOff: ['terminal length 0', 'terminal width 32767'],
    // EOS: `configure replace <url> [ignore-errors] [md5 …] [skip-checkpoint]`, no `force` (it asks nothing).
    restore: fileReplace('flash:switchboard-restore.cfg', false),
    errorPatterns: [...CISCO_LIKE_ERRORS, /^% ?Not supported/, /^% ?This is an unconverted command/],
    volatileLines: [/^! Command: show running-config.*$/, /^! Time: .*$/, /^! Startup-config last modified at .*$/, ...COMMON_VOLATILE],
  }),
  vendor_panos: ciscoLike('vendor_panos', 'PAN-OS-like: user@name> operational, set cli pager off, show config running', {
    prompts: OPERATIONAL_PROMPTS,
    pagerOff: ['set cli pager off', 'set cli scripting-mode on'],
    showConfig: 'show config running',
    showVersion: 'show system info',
    enable: NO_ENABLE,
    // The candidate is shared by every administrator: a plain `commit` would commit another
    // administrator's pending changes with ours, and `revert config` would throw them away. PAN-OS
    // 8.0+ keeps the candidate's changes per account: the push commits and reverts its own account's
    // changes only, and first discards what its account left uncommitted (see discardOwn). Other
    // administrators' pending changes stay pending, untouched. So Switchboard needs an account of
    // its own on the firewall: PAN-OS cannot tell apart two people on one account.
    configMode: {
      enter: 'configure',
      exit: 'exit',
      commit: `commit partial admin ${USER_PLACEHOLDER}`,
      abort: [`revert config partial admin ${USER_PLACEHOLDER}`, 'exit'],
      discardOwn: `revert config partial admin ${USER_PLACEHOLDER}`,
    },
    restore: { method: 'none' },
    truncated: undefined,
    // A commit whose validation fails prints why, then `Commit failed`.
    errorPatterns: [/^Unknown command: /, /^Invalid syntax\.?$/, /^Server error ?:/, /^Error: /, /^Invalid command/, /^Commit failed/],
    pager: [/lines \d+-\d+( \(END\))?/, /\(END\)/],
    noiseLines: [/^\[edit[^\]]*\]$/],
    volatileLines: [/^# ?Generated at .*$/, /^# ?Time: .*$/, ...COMMON_VOLATILE],
  }),
  vendor_fw: ciscoLike('vendor_fw', 'FortiOS-like firewall: `name # `, console output standard, show', {
    prompts: {
      user: new RegExp(String.raw`^${HOST} \$$`),
      privileged: new RegExp(String.raw`^${HOST} #$`),
      config: new RegExp(String.raw`^${HOST} \([\w.\-]+\) #$`),
    },
    pagerOff: ['config system console', 'set output standard', 'end'],
    showConfig: 'show',
    showVersion: 'get system status',
    enable: NO_ENABLE,
    // No configuration mode: a template is typed at the top-level prompt and carries its own `config …` / `edit …`
    // blocks, which `next` and `end` save. `abort` leaves the open block discarding it, where `end` would save it.
    configMode: { exit: 'end', abort: ['abort'], saves: /^(next|end)$/ },
    restore: { method: 'none' },
    truncated: undefined,
    // `value parse error before '…'` comes before `Command fail. Return code -8`: listed so the message names it.
    errorPatterns: [/^Unknown action \d+/, /^command parse error/, /^value parse error/, /^Command fail\. Return code/, /^-\d+ ?: ?error/i],
    pager: [/--More--/],
    volatileLines: [/^#conf_file_ver=\d+$/, /^#config-version=.*$/, /^#buildno=\d+$/, /^#global_vdom=\d+$/, ...COMMON_VOLATILE],
  }),
  generic,
  custom: {
    ...generic,
    deviceType: 'custom',
    description: 'Custom: generic defaults with a permissive prompt; override with registerDialect()',
    prompts: {
      user: new RegExp(String.raw`^${HOST} ?>$`),
      privileged: new RegExp(String.raw`^${HOST} ?[#$%\]]$`),
      config: new RegExp(String.raw`^${HOST} ?\([^)]*\) ?[#$%]$`),
    },
  },
};

export const DIALECT_TYPES = Object.freeze(Object.keys(DIALECTS));

/** The dialect for a device_type; unknown types fall back to generic. */
/**
 * A fetched configuration as it is stored and hashed: CLI noise and the dialect's volatile lines
 * dropped, blank lines trimmed at both ends, so two pulls of an unchanged device are equal.
 */
export function stableConfigLines(dialect: Pick<SshDialect, 'noiseLines' | 'volatileLines'>, lines: string[]): string[] {
  return trimBlankLines(dropMatching(lines, [...dialect.noiseLines, ...dialect.volatileLines]));
}

export function getDialect(deviceType: string): SshDialect {
  return DIALECTS[deviceType] ?? DIALECTS.generic;
}

/** Replace or tweak a dialect at run time (e.g. the `custom` entry for one site's odd boxes). */
export function registerDialect(deviceType: string, overrides: Partial<SshDialect>): SshDialect {
  const base = DIALECTS[deviceType] ?? DIALECTS.generic;
  const entry: SshDialect = { ...base, ...overrides, deviceType };
  DIALECTS[deviceType] = entry;
  return entry;
}
