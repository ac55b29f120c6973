/**
 * What a configuration push types and how its failures read: the lines of cli changes, the
 * error of a line or a commit that failed (partial when part of the change may be on the
 * device), and names typed as one word of a command.
 */
import { DriverError, mayHaveGoneIn, type ConfigChange } from '../types';
import type { SshDialect } from './dialects';

/** A config line that renames the device, and so its prompt, at once (IOS-like CLIs). */
export const HOSTNAME_LINE = /^\s*hostname\s+\S/;

/**
 * The lines a set of cli changes types in configuration mode, in push order: the rendered text
 * as it is (blank lines dropped). Write `no …` lines to remove something; `operation` does not
 * apply to CLI text. A line holding a key the CLI acts on as it is typed is refused before
 * anything is typed (helpKey).
 */
export function cliLines(changes: ConfigChange[], where: string): string[] {
  const lines: string[] = [];
  for (const change of changes) {
    if (change.config_format !== 'cli') {
      throw new DriverError('device', `${where}: the SSH CLI driver pushes cli templates only, not ${change.config_format}`);
    }
    // Indentation typed as spaces: a tab there would ask the CLI to complete an empty word.
    for (const line of change.config.split(/\r?\n/))
      if (line.trim() !== '') lines.push(line.trimEnd().replace(/^\s+/, (ws) => ws.replace(/\t/g, ' ')));
  }
  const at = lines.findIndex((l) => HELP_KEY.test(l));
  if (at >= 0) throw new DriverError('device', `${where}: ${helpKey(lines[at], at, lines.length)}; nothing was typed`);
  return lines;
}

/** Keys a network CLI acts on as they are typed (IOS, NX-OS, EOS, XR, Junos, PAN-OS, FortiOS alike). */
const HELP_KEY = /[?\t]/;

/**
 * Why a line holding one cannot be typed: `?` lists the possible words and a tab completes one,
 * neither goes into the line, so the device would take it without them (`description link up?`
 * becomes `description link up`), silently. The line is quoted as typed, so that the masks of
 * the job's secrets (credentials, secret variables) find what it holds.
 */
function helpKey(line: string, i: number, n: number): string {
  const key = line.includes('?') ? "a '?', which the CLI takes as a request for help" : 'a tab, which the CLI takes as word completion';
  return `line ${i + 1} of ${n} ('${line.trim()}') holds ${key}, not as text: the device would get the line without it`;
}

/**
 * The error of config line `i` (of `n`, `taken` in effect before it went in). A refusal by a
 * dialect without commit after earlier lines took effect is partial; so is any other failure of a
 * line that was sent (a timeout, a dropped session: the device may have taken it, and a line that
 * changes the management path drops the session in just this way), so that the push is undone.
 */
export function lineFailed(e: unknown, i: number, n: number, taken: number, { commit, saves }: SshDialect['configMode']): unknown {
  if (!(e instanceof DriverError)) return e;
  if (e.kind === 'device') {
    const note = commit ? '; nothing was committed' : saves && taken === 0 ? '; nothing was saved' : '';
    return new DriverError('device', `${e.message} (line ${i + 1} of ${n}${note})`, { partial: !commit && taken > 0 });
  }
  if (commit) return new DriverError(e.kind, `${e.message} (line ${i + 1} of ${n}; nothing was committed)`);
  return mayHaveGoneIn(e, `line ${i + 1} of ${n}, which the device may have taken`);
}

/** What a CLI says to a command it does not have (PAN-OS). */
export const UNKNOWN_COMMAND = /^(Invalid syntax|Unknown command)/;

/** A commit whose answer never came (a timeout, a dropped session) may have gone through: partial, saying why. */
export function unanswered(e: unknown, note: string): unknown {
  return e instanceof DriverError && e.kind !== 'device' ? mayHaveGoneIn(e, note) : e;
}

/**
 * A name as one word of a command line: as it is when plain, else in double quotes; a name the
 * CLI could not take as one word (a quote, a line break) is refused rather than sent.
 */
export function cliWord(name: string, where: string): string {
  if (/^[\w.@\\-]+$/.test(name)) return name;
  if (/["\r\n]/.test(name))
    throw new DriverError('device', `${where}: the login name cannot be typed as one word of a command: ${JSON.stringify(name)}`);
  return `"${name}"`;
}
