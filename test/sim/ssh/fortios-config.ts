/**
 * FortiOS-like CLI of the SSH simulator. FortiOS has no configuration mode: at the top-level prompt
 * `config <path>` opens a block and `edit <name>` an entry of it, the prompt showing the innermost
 * (`name (interface) # `, `name (port1) # `); `set`/`unset` change the open level. `next` saves the
 * entry and goes back to its table; `end` saves the open level and goes up (in an entry: the entry
 * and its table); `abort` goes up the same way, discarding. Each open level edits a copy that
 * saving writes into the level below it, the outermost into the running config; `next` also writes
 * the entry through to where its table is kept, so an entry of a top-level table is on the device
 * at once, as FortiOS saves it (an `abort` of the table after it keeps it). A refused line changes
 * nothing and leaves the level open.
 */
import type { SimDeviceState } from './cli';

/** A block or an entry: its fields, the `config` blocks inside it, and (a table) its `edit` entries. */
export interface FortiNode {
  /** `set <key> <value>`, in order. */
  fields: Map<string, string>;
  /** By path (`system interface`). */
  blocks: Map<string, FortiNode>;
  /** By name as typed (`"port1"`, `1`). */
  entries: Map<string, FortiNode>;
}

type Verb = 'config' | 'edit';

interface Level {
  verb: Verb;
  /** The path or the entry name, as in the config. */
  key: string;
  /** The level as changed so far, not saved. */
  copy: FortiNode;
}

export interface FortiReply {
  say: string;
  /** Set when `config system console` was saved: whether output pages (anything but `set output standard`). */
  pager?: boolean;
}

/**
 * Kept by the shell, not in the config: here the agent's pager-off at login (`config system
 * console` / `set output standard` / `end`) would otherwise change the config every test compares.
 */
const SESSION_BLOCK = 'system console';

const node = (): FortiNode => ({ fields: new Map(), blocks: new Map(), entries: new Map() });

const copyOf = (n: FortiNode): FortiNode => ({
  fields: new Map(n.fields),
  blocks: new Map([...n.blocks].map(([k, v]) => [k, copyOf(v)])),
  entries: new Map([...n.entries].map(([k, v]) => [k, copyOf(v)])),
});

/** The first word of a line and the rest (`set ip 10.0.0.1 255.255.255.0` → `set`, `ip 10.0.0.1 …`). */
function verbOf(line: string): [string, string] {
  const t = line.trim();
  const at = t.search(/\s/);
  return at < 0 ? [t, ''] : [t.slice(0, at), t.slice(at).trim()];
}

/** The running config as `show` prints it (without its `#` header) as a tree. */
export function parseFortios(text: string): FortiNode {
  const root = node();
  const open = [root];
  for (const line of text.split('\n')) {
    const [verb, rest] = verbOf(line);
    const top = open[open.length - 1];
    if (verb === 'config' || verb === 'edit') {
      const child = node();
      (verb === 'config' ? top.blocks : top.entries).set(rest, child);
      open.push(child);
    } else if (verb === 'set') top.fields.set(...verbOf(rest));
    else if ((verb === 'next' || verb === 'end') && open.length > 1) open.pop();
  }
  return root;
}

/** A tree as `show` prints it: four spaces a level, fields first, then blocks, then entries. */
export function renderFortios(n: FortiNode, depth = 0): string[] {
  const pad = '    '.repeat(depth);
  return [
    ...[...n.fields].map(([key, value]) => `${pad}set ${key} ${value}`),
    ...[...n.blocks].flatMap(([path, b]) => [`${pad}config ${path}`, ...renderFortios(b, depth + 1), `${pad}end`]),
    ...[...n.entries].flatMap(([name, e]) => [`${pad}edit ${name}`, ...renderFortios(e, depth + 1), `${pad}next`]),
  ];
}

const OCTET = String.raw`(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const IPV4 = new RegExp(String.raw`^${OCTET}(\.${OCTET}){3}$`);
const PREFIX = new RegExp(String.raw`^${OCTET}(\.${OCTET}){3}/(3[0-2]|[12]?\d)$`);

/**
 * The word of a `set ip` value FortiOS would refuse (it takes `a.b.c.d m.m.m.m` or `a.b.c.d/len`),
 * or undefined. Only `ip` is checked, the value a template most often gets wrong; others go in as typed.
 */
function badValue(key: string, value: string): string | undefined {
  if (key !== 'ip') return undefined;
  const words = value.split(/\s+/);
  if ((words.length === 2 && words.every((w) => IPV4.test(w))) || (words.length === 1 && PREFIX.test(value))) return undefined;
  return words.find((w) => !IPV4.test(w)) ?? value;
}

const OK: FortiReply = { say: '' };
const valueError = (word: string): FortiReply => ({ say: `value parse error before '${word}'\nCommand fail. Return code -8\n` });

/** The open blocks of one shell. */
export class FortiosBlocks {
  private levels: Level[] = [];
  /** The running config as a tree, read when the first block opens. */
  private running = node();

  constructor(private readonly dev: SimDeviceState) {}

  get isOpen(): boolean {
    return this.levels.length > 0;
  }

  /** What the prompt shows: the innermost level (`interface`, `port1`). */
  where(): string {
    const top = this.levels[this.levels.length - 1];
    return top.verb === 'config' ? top.key.split(' ').pop()! : top.key.replace(/"/g, '');
  }

  /** One line typed at the top-level prompt (`config …`) or in an open block. */
  line(text: string): FortiReply {
    const [verb, rest] = verbOf(text);
    const top = this.levels[this.levels.length - 1];
    if (verb === 'config' && rest !== '') return this.open('config', rest);
    if (!top) return this.refuse(verb);
    if (verb === 'edit' && rest !== '' && top.verb === 'config') return this.open('edit', rest);
    if (verb === 'set') return this.set(top, rest);
    if (verb === 'unset' && rest !== '') return (top.copy.fields.delete(rest), OK);
    if (verb === 'next' && rest === '' && top.verb === 'edit') return this.next();
    if ((verb === 'end' || verb === 'abort') && rest === '') return this.up(verb === 'end');
    return this.refuse(verb);
  }

  /** FortiOS's answer to a command it does not take here (`command parse error before '…'`). */
  private refuse(word: string): FortiReply {
    return { say: this.dev.persona.error(word, 0) };
  }

  private open(verb: Verb, key: string): FortiReply {
    if (this.levels.length === 0) this.running = parseFortios(this.dev.getBody());
    const saved = this.holder(this.levels.length, verb).get(key);
    this.levels.push({ verb, key, copy: saved ? copyOf(saved) : node() });
    return OK;
  }

  /** Where the level at depth `i` is kept: in the level below's copy, or the running config. */
  private holder(i: number, verb: Verb): Map<string, FortiNode> {
    const below = i === 0 ? this.running : this.levels[i - 1].copy;
    return verb === 'config' ? below.blocks : below.entries;
  }

  private set(top: Level, rest: string): FortiReply {
    const [key, value] = verbOf(rest);
    if (key === '' || value === '') return this.refuse(key || 'set');
    const bad = badValue(key, value);
    if (bad !== undefined) return valueError(bad);
    top.copy.fields.set(key, value);
    return OK;
  }

  /** `next`: the entry saved into its table and through to where the table is kept. */
  private next(): FortiReply {
    const at = this.levels.length - 1;
    const { key, copy } = this.levels[at];
    this.save(at);
    this.levels.pop();
    const table = this.levels[at - 1];
    const kept = this.holder(at - 1, 'config');
    if (!kept.has(table.key)) kept.set(table.key, node());
    kept.get(table.key)!.entries.set(key, copyOf(copy));
    if (at === 1) this.persist();
    return OK;
  }

  /** `end` (keep) or `abort`: leaves the open level, an entry together with its table. */
  private up(keep: boolean): FortiReply {
    let reply = OK;
    const leave = () => {
      if (keep) reply = this.save(this.levels.length - 1);
      this.levels.pop();
    };
    if (this.levels[this.levels.length - 1].verb === 'edit') leave();
    leave();
    return reply;
  }

  /** Writes level `i`'s copy where it is kept; the outermost goes to the running config. */
  private save(i: number): FortiReply {
    const { verb, key, copy } = this.levels[i];
    if (i === 0 && key === SESSION_BLOCK) return { say: '', pager: copy.fields.get('output') !== 'standard' };
    this.holder(i, verb).set(key, copy);
    if (i === 0) this.persist();
    return OK;
  }

  private persist(): void {
    this.dev.setBody(renderFortios(this.running).join('\n') + '\n');
  }
}
