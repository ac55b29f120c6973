/**
 * PAN-OS-like configuration mode of the SSH simulator: `set`/`delete` lines go into one candidate
 * shared by every administrator, and PAN-OS (8.0+) remembers which administrator made each
 * change. A plain `commit` commits everybody's pending changes and `revert config` throws
 * everybody's away; `commit partial admin <name>` and `revert config partial admin <name>` take
 * only that administrator's. Changes stay pending after their session ends, as on the firewall.
 * The running config is the `set` lines `show config running` prints here: a `set` line is added
 * when it is not there yet, `delete X` removes the lines under `set X`.
 */
import type { SimDeviceState } from './cli';

/** One pending change of the shared candidate and who made it. */
interface PendingChange {
  admin: string;
  line: string;
}

/** What all shells of one device share: the changes nobody has committed yet, in order. */
export interface PanosCandidate {
  pending: PendingChange[];
  commits: number;
}

/** Top-level nodes of the configuration a `set` or `delete` may start with. */
const NODES = new Set([
  'address',
  'address-group',
  'application',
  'application-group',
  'deviceconfig',
  'external-list',
  'log-settings',
  'mgt-config',
  'network',
  'profile-group',
  'profiles',
  'rulebase',
  'schedule',
  'service',
  'service-group',
  'shared',
  'tag',
  'vsys',
  'zone',
]);

/** `<name>` or `"<name>"` (how the CLI takes one word with blanks in it). */
const NAME = String.raw`("[^"]*"|\S+)`;
const COMMIT = new RegExp(String.raw`^commit(?: force| partial admin ${NAME})?$`);
const REVERT = new RegExp(String.raw`^revert config(?: partial admin ${NAME})?$`);

const unquote = (w: string) => (w.startsWith('"') ? w.slice(1, -1) : w);

/** One administrator's configuration mode over the device's shared candidate. */
export class PanosConfigMode {
  private readonly db: PanosCandidate;

  constructor(
    private readonly dev: SimDeviceState,
    private readonly admin: string,
  ) {
    this.db = dev.panos ??= { pending: [], commits: 0 };
  }

  /** The answer to a configuration-mode line, or undefined when the CLI does not know the command. */
  line(line: string): string | undefined {
    const words = line.split(/\s+/);
    if (words[0] === 'set' || words[0] === 'delete') return this.edit(line, words);
    const commit = COMMIT.exec(line);
    if (commit) return this.commit(commit[1] === undefined ? undefined : unquote(commit[1]));
    const revert = REVERT.exec(line);
    if (revert) return this.revert(revert[1] === undefined ? undefined : unquote(revert[1]));
    if (line === 'check pending-changes') return this.db.pending.length > 0 ? 'yes\n' : 'no\n';
    if (['commit', 'revert'].includes(words[0])) return 'Invalid syntax.\n';
    return undefined;
  }

  private edit(line: string, words: string[]): string {
    if (words.length < 3 || !NODES.has(words[1])) return 'Invalid syntax.\n';
    this.db.pending.push({ admin: this.admin, line });
    return '';
  }

  /** Commits the pending changes of `admin` (all of them without one) to the running config. */
  private commit(admin: string | undefined): string {
    const mine = (c: PendingChange) => admin === undefined || c.admin === admin;
    const taken = this.db.pending.filter(mine);
    if (taken.length === 0) return 'There are no changes to commit.\n';
    this.db.pending = this.db.pending.filter((c) => !mine(c));
    this.dev.setBody(taken.reduce((body, c) => applyLine(body, c.line), this.dev.getBody()));
    return (
      `Commit job ${++this.db.commits} is in progress. Use Ctrl+C to return to command prompt\n` +
      '......55%....75%....98%.......100%\nConfiguration committed successfully\n'
    );
  }

  /** Throws away the pending changes of `admin` (everybody's without one). */
  private revert(admin: string | undefined): string {
    this.db.pending = this.db.pending.filter((c) => admin !== undefined && c.admin !== admin);
    return 'Candidate configuration reverted\n';
  }
}

/** A `set` or `delete` line applied to the running config's `set` lines. */
function applyLine(body: string, line: string): string {
  const lines = body.replace(/\n$/, '').split('\n');
  const [verb, ...path] = line.split(/\s+/);
  if (verb === 'set') return (lines.includes(line) ? lines : [...lines, line]).join('\n') + '\n';
  const under = `set ${path.join(' ')}`;
  return lines.filter((l) => l !== under && !l.startsWith(`${under} `)).join('\n') + '\n';
}
