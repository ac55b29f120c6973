/**
 * Junos-like configuration mode of the SSH simulator: the curly-brace config as a tree of
 * statements that `set`/`delete`/`edit`, `load override|merge terminal`, `rollback` and `commit`
 * (`commit confirmed` too, see confirmed-commit.ts) change, rendered back to the same text `show
 * configuration` prints. The candidate is shared by all shells of a device (plain `configure`):
 * uncommitted changes outlive the session that made them until a commit or a `rollback 0`. Which words form one statement is data (the tables
 * below); a keyword not in them is a syntax error, as on a device that does not know it.
 */
import type { SimDeviceState } from './cli';

/** A statement: its words (`unit 0`, `host-name r1`) and the statements inside it. */
export interface JunosNode {
  key: string[];
  children: JunosNode[];
}

/**
 * `container`: the keyword alone (`system`, `ssh;`); `named`: keyword + identifier (`unit 0`,
 * `user admin`), may hold statements; `value`: keyword + one value (`host-name r1;`), one per
 * parent, setting it again replaces it.
 */
type Kind = 'container' | 'named' | 'value';

const KINDS: Record<string, Kind> = {};
const kinds = (kind: Kind, words: string) => words.split(/\s+/).forEach((w) => (KINDS[w] = kind));
kinds(
  'container',
  'system root-authentication login services ssh netconf telnet ntp name-server syslog interfaces routing-options static protocols ospf ' +
    'ospf3 lldp bgp snmp policy-options firewall vlans chassis disable passive',
);
kinds('named', 'unit family address server route area interface user group neighbor community policy-statement term filter prefix-list host file');
kinds(
  'value',
  'version host-name domain-name time-zone encrypted-password uid class full-name description next-hop mtu vlan-id router-id ' +
    'autonomous-system peer-as local-address type preference metric location contact export import',
);

/** Parents whose children are bare names (`ge-0/0/0 { … }`, a name server's address). */
const NAME_CHILD: Record<string, Kind> = { interfaces: 'container', 'name-server': 'container', vlans: 'container' };
const TOP = new Set(['version', 'system', 'interfaces', 'routing-options', 'protocols', 'policy-options', 'firewall', 'snmp', 'vlans', 'chassis']);
/** Shown on one line when they hold a single plain statement (`route 0.0.0.0/0 next-hop 10.0.0.1;`). */
const ONE_LINE = new Set(['route']);
/** Values the device marks as secret when it shows them. */
const SECRET = new Set(['encrypted-password']);
/** Commit-time checks: a `named` statement and the statements it must hold. */
const MANDATORY: Record<string, string[]> = { user: ['class'] };

const INDENT = '    ';
const unquote = (w: string) => (w.length >= 2 && w.startsWith('"') && w.endsWith('"') ? w.slice(1, -1) : w);
const sameKey = (a: string[], b: string[]) => a.length === b.length && a.every((w, i) => unquote(w) === unquote(b[i]));

interface Token {
  text: string;
  at: number;
}

/** Words of a line (double quotes keep blanks; `{`, `}`, `;` are words of their own); `#` starts a comment. */
function tokenize(line: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const ch = line[i];
    if (ch === ' ' || ch === '\t') i++;
    else if (ch === '#') break;
    else if (ch === '{' || ch === '}' || ch === ';') out.push({ text: ch, at: i++ });
    else {
      const at = i;
      if (ch === '"') {
        i++;
        while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1;
        i++;
      } else while (i < line.length && !' \t{};#'.includes(line[i])) i++;
      out.push({ text: line.slice(at, i), at });
    }
  }
  return out;
}

export class JunosSyntaxError extends Error {
  constructor(
    message: string,
    /** Index of the offending word (words.length: one is missing). */
    readonly word: number,
  ) {
    super(message);
  }
}

/** The statement that starts at words[i] under `parent`: its key and kind. */
function statementAt(parent: JunosNode | undefined, words: string[], i: number, partial: boolean): { key: string[]; kind: Kind } {
  const w = words[i];
  const named = parent && NAME_CHILD[parent.key[0]];
  const kind = named || KINDS[w];
  if (!kind || (!parent && !TOP.has(w))) throw new JunosSyntaxError('syntax error.', i);
  if (named || kind === 'container') return { key: [w], kind };
  if (i + 1 >= words.length) {
    if (partial) return { key: [w], kind };
    throw new JunosSyntaxError('missing argument.', i + 1);
  }
  if (kind === 'value' && i + 2 < words.length) throw new JunosSyntaxError('syntax error.', i + 2);
  return { key: [w, words[i + 1]], kind };
}

export class JunosTree {
  constructor(readonly root: JunosNode = { key: [], children: [] }) {}

  static parse(text: string): JunosTree {
    const { tree, errors } = JunosTree.load(text);
    if (errors.length) throw new Error(`junos simulator: cannot parse its own config: ${errors[0]}`);
    return tree;
  }

  clone(): JunosTree {
    const copy = (n: JunosNode): JunosNode => ({ key: [...n.key], children: n.children.map(copy) });
    return new JunosTree(copy(this.root));
  }

  /** Curly text (`load … terminal`, the running config) into `into` (override: an empty tree). */
  static load(text: string, into = new JunosTree()): { tree: JunosTree; errors: string[] } {
    const errors: string[] = [];
    const stack: Array<{ node: JunosNode; path: string[][] }> = [{ node: into.root, path: [] }];
    text.split(/\r?\n/).forEach((raw, n) => {
      const tokens = tokenize(raw);
      if (tokens.length === 0) return;
      const top = stack[stack.length - 1];
      const fail = (t: Token, what: string) => {
        const edit = top.path.map((k) => k.join(' ')).join(' ');
        errors.push(`terminal:${n + 1}:(${t.at}) syntax error: ${t.text}\n  [edit${edit ? ' ' + edit : ''}]\n    '${raw.trim()}'\n      ${what}`);
      };
      const words = tokens.map((t) => t.text);
      const last = words[words.length - 1];
      if (words.length === 1 && last === '}') {
        if (stack.length === 1) fail(tokens[0], 'syntax error');
        else stack.pop();
        return;
      }
      const body = words.slice(0, -1);
      if ((last !== '{' && last !== ';') || body.length === 0 || body.some((w) => '{};'.includes(w))) return fail(tokens[0], 'syntax error');
      try {
        const { node, path } = into.setAt(top.node, body, top.path);
        if (last === '{') stack.push({ node, path });
      } catch (e) {
        if (!(e instanceof JunosSyntaxError)) throw e;
        fail(tokens[Math.min(e.word, body.length - 1)], e.message.replace(/\.$/, ''));
      }
    });
    if (stack.length > 1) errors.push(`terminal:${text.split('\n').length}:(0) syntax error: missing '}'`);
    return { tree: into, errors };
  }

  /** The node at an edit path (keys), made when missing. */
  nodeAt(path: string[][]): JunosNode {
    return this.setAt(this.root, path.flat(), []).node;
  }

  /** `set <words>` under `from` (at edit path `path`): returns the last statement and its path. */
  setAt(from: JunosNode, words: string[], path: string[][]): { node: JunosNode; path: string[][]; kind?: Kind } {
    let node = from;
    let at = [...path];
    let kind: Kind | undefined;
    for (let i = 0; i < words.length;) {
      const s = statementAt(node === this.root ? undefined : node, words, i, false);
      kind = s.kind;
      let child = node.children.find((c) => (s.kind === 'value' ? c.key[0] === s.key[0] : sameKey(c.key, s.key)));
      if (!child) node.children.push((child = { key: s.key, children: [] }));
      else if (s.kind === 'value') child.key = s.key;
      node = child;
      at = [...at, s.key];
      i += s.key.length;
    }
    return { node, path: at, kind };
  }

  /** `delete <words>` under `from`: false when there was no such statement. */
  deleteAt(from: JunosNode, words: string[]): boolean {
    let node = from;
    for (let i = 0; i < words.length;) {
      const s = statementAt(node === this.root ? undefined : node, words, i, true);
      const lastWord = i + s.key.length >= words.length;
      // `delete … description` / `delete … user` (no value or name): every such statement.
      const matches = (c: JunosNode) => (s.key.length === 1 && s.kind !== 'container' ? c.key[0] === s.key[0] : sameKey(c.key, s.key));
      if (lastWord) {
        const before = node.children.length;
        node.children = node.children.filter((c) => !matches(c));
        return node.children.length < before;
      }
      const child = node.children.find(matches);
      if (!child) return false;
      node = child;
      i += s.key.length;
    }
    return false;
  }

  /** The statements under `node` as the device shows them. */
  static render(nodes: JunosNode[], indent = ''): string {
    const out: string[] = [];
    const walk = (list: JunosNode[], pad: string) => {
      for (const n of list) {
        const head = pad + n.key.join(' ');
        const only = n.children[0];
        if (n.children.length === 0) out.push(`${head};${SECRET.has(n.key[0]) ? ' ## SECRET-DATA' : ''}`);
        else if (ONE_LINE.has(n.key[0]) && n.children.length === 1 && only.children.length === 0) out.push(`${head} ${only.key.join(' ')};`);
        else {
          out.push(`${head} {`);
          walk(n.children, pad + INDENT);
          out.push(`${pad}}`);
        }
      }
    };
    walk(nodes, indent);
    return out.map((l) => l + '\n').join('');
  }

  text(): string {
    return JunosTree.render(this.root.children);
  }

  /** Commit checks: one block of output per missing mandatory statement. */
  check(): string[] {
    const problems: string[] = [];
    const walk = (n: JunosNode, path: string[][]) => {
      for (const c of n.children) {
        for (const need of MANDATORY[c.key[0]] ?? []) {
          if (c.key.length === 2 && !c.children.some((x) => x.key[0] === need)) {
            problems.push(`[edit ${path.map((k) => k.join(' ')).join(' ')}]\n  '${c.key.join(' ')}'\n    Missing mandatory statement: '${need}'`);
          }
        }
        walk(c, [...path, c.key]);
      }
    };
    walk(this.root, []);
    return problems;
  }
}

/** What all shells of a device share: the candidate (undefined = the running config) and the commit history. */
export interface JunosDatabase {
  candidate?: JunosTree;
  /** Earlier running configs, newest first (`rollback 1` is history[0]). */
  history: string[];
}

/** What the shell does after a config-mode line. */
export type JunosReply =
  | { say: string; next?: 'leave' }
  | { say: string; next: 'ask'; answer: (text: string) => JunosReply }
  | { say: string; next: 'load'; finish: (text: string) => string }
  | { say: string; next: 'run'; command: string };

/** The minutes of `commit confirmed [<minutes>]` (1 to 65535, default 10), or undefined when not a valid count. */
function confirmMinutes(word: string | undefined): number | undefined {
  if (word === undefined) return 10;
  const n = /^\d+$/.test(word) ? Number(word) : 0;
  return n >= 1 && n <= 65535 ? n : undefined;
}

const COMMANDS = ['set', 'delete', 'edit', 'up', 'top', 'exit', 'quit', 'commit', 'rollback', 'load', 'show', 'run'];

/** One shell's configuration mode on a Junos-like device. */
export class JunosConfigMode {
  /** The edit path (`edit interfaces ge-0/0/1` → [['interfaces'], ['ge-0/0/1']]). */
  private path: string[][] = [];
  private readonly db: JunosDatabase;

  constructor(private readonly dev: SimDeviceState & { junos?: JunosDatabase }) {
    this.db = dev.junos ??= { history: [] };
  }

  private candidate(): JunosTree {
    return (this.db.candidate ??= JunosTree.parse(this.dev.getBody()));
  }

  private changed(): boolean {
    return this.db.candidate !== undefined && this.db.candidate.text() !== this.dev.getBody();
  }

  /** What `configure` prints. */
  enter(): string {
    this.path = [];
    return 'Entering configuration mode\n' + (this.changed() ? 'The configuration has been changed but not committed\n' : '');
  }

  /** The banner before the prompt, without brackets (`edit`, `edit interfaces ge-0/0/1`). */
  where(): string {
    return ['edit', ...this.path.map((k) => k.join(' '))].join(' ');
  }

  line(line: string, promptLen: number): JunosReply {
    const tokens = tokenize(line);
    const words = tokens.map((t) => t.text);
    const caret = (i: number, text: string) => {
      const col = i < tokens.length ? tokens[i].at : line.length + 1;
      return { say: `${' '.repeat(promptLen + col)}^\n${text}\n` };
    };
    const hits = COMMANDS.filter((c) => words[0] !== undefined && c.startsWith(words[0]));
    const cmd = hits.includes(words[0]) ? words[0] : hits.length === 1 ? hits[0] : undefined;
    if (!cmd || words.slice(1).some((w) => '{};'.includes(w))) return caret(0, 'unknown command.');
    const args = words.slice(1);
    try {
      switch (cmd) {
        case 'set':
        case 'edit': {
          if (args.length === 0) return caret(1, 'missing argument.');
          const tree = this.candidate();
          const r = tree.setAt(tree.nodeAt(this.path), args, this.path);
          if (cmd === 'edit') {
            if (r.kind === 'value') throw new JunosSyntaxError('syntax error.', args.length);
            this.path = r.path;
          }
          return { say: '' };
        }
        case 'delete': {
          if (args.length === 0) {
            return {
              say: 'Delete everything under this level? [yes,no] (no) ',
              next: 'ask',
              answer: (a) => {
                if (/^y(es)?$/i.test(a)) this.candidate().nodeAt(this.path).children = [];
                return { say: '' };
              },
            };
          }
          const tree = this.candidate();
          return { say: tree.deleteAt(tree.nodeAt(this.path), args) ? '' : 'warning: statement not found\n' };
        }
        case 'up':
        case 'top':
          if (this.path.length === 0) return { say: 'Already at the top of the configuration\n' };
          this.path = cmd === 'top' ? [] : this.path.slice(0, -Math.max(1, Number(args[0]) || 1));
          return { say: '' };
        case 'exit':
        case 'quit':
          if (args.length > 0 && !(cmd === 'exit' && 'configuration-mode'.startsWith(args[0]) && args.length === 1)) return caret(1, 'syntax error.');
          if (args.length === 0 && this.path.length > 0) {
            this.path = this.path.slice(0, -1);
            return { say: '' };
          }
          // `exit configuration-mode` leaves at once; a plain exit asks first when the candidate has changes.
          if (args.length === 0 && this.changed()) {
            return {
              say: 'The configuration has been changed but not committed\nExit with uncommitted changes? [yes,no] (yes) ',
              next: 'ask',
              answer: (a) => (/^(y(es)?)?$/i.test(a) ? { say: '', next: 'leave' } : { say: '' }),
            };
          }
          return { say: '', next: 'leave' };
        case 'commit':
          return this.commit(args, caret);
        case 'rollback': {
          const n = args.length === 0 ? 0 : /^\d+$/.test(args[0]) && args.length === 1 ? Number(args[0]) : -1;
          if (n < 0) return caret(1, 'syntax error.');
          if (n > this.db.history.length) return { say: `error: Cannot open rollback file ${n}: no such configuration\n` };
          this.db.candidate = n === 0 ? undefined : JunosTree.parse(this.db.history[n - 1]);
          return { say: 'load complete\n' };
        }
        case 'load': {
          const how = args[0] === 'override' || args[0] === 'merge' ? args[0] : undefined;
          if (!how) return caret(1, args.length ? 'syntax error.' : 'missing argument.');
          if (args[1] !== 'terminal' || args.length > 2) return caret(2, args.length < 2 ? 'missing argument.' : 'syntax error.');
          return { say: '[Type ^D at a new line to end input]\n', next: 'load', finish: (text) => this.load(how, text) };
        }
        case 'show':
          if (args.length > 0) return caret(1, 'syntax error.');
          return { say: JunosTree.render(this.candidate().nodeAt(this.path).children) };
        case 'run':
          if (args.length === 0) return caret(1, 'missing argument.');
          return { say: '', next: 'run', command: args.join(' ') };
      }
    } catch (e) {
      if (!(e instanceof JunosSyntaxError)) throw e;
      return caret(e.word + 1, e.message);
    }
    return caret(0, 'unknown command.');
  }

  /**
   * `commit [check | and-quit | comment <text> | confirmed [<minutes>]]`. A confirmed commit (10
   * minutes when no time is given) is rolled back when its time passes, unless a later commit or
   * `commit check`, in any session, confirms it.
   */
  private commit(args: string[], caret: (i: number, text: string) => { say: string }): JunosReply {
    const mode = args[0];
    if (args.length > 0 && !['check', 'and-quit', 'comment', 'confirmed'].includes(mode)) return caret(1, 'syntax error.');
    if (mode === 'comment' && args.length !== 2) return caret(2, args.length < 2 ? 'missing argument.' : 'syntax error.');
    const minutes = mode === 'confirmed' ? confirmMinutes(args[1]) : undefined;
    if (mode === 'confirmed' && (minutes === undefined || args.length > 2)) return caret(minutes === undefined ? 2 : 3, 'syntax error.');
    const candidate = this.db.candidate;
    const problems = candidate?.check() ?? [];
    if (problems.length) return { say: `${problems.join('\n')}\nerror: configuration check-out failed: (missing mandatory statements)\n` };
    const trial = this.dev.confirmedCommit;
    if (minutes === undefined) trial.confirm();
    if (mode === 'check') return { say: 'configuration check succeeds\n' };
    if (minutes !== undefined) {
      const before = this.dev.getBody();
      trial.arm(minutes * 60, () => this.activate(before));
    }
    if (candidate && this.changed()) this.activate(candidate.text());
    this.db.candidate = undefined;
    const say = (minutes ? `commit confirmed will be automatically rolled back in ${minutes} minutes unless confirmed\n` : '') + 'commit complete\n';
    return mode === 'and-quit' ? { say, next: 'leave' } : { say };
  }

  /** Makes `text` the running config; the one it replaces becomes `rollback 1`. */
  private activate(text: string): void {
    this.db.history.unshift(this.dev.getBody());
    this.db.history.splice(49);
    this.dev.setBody(text);
  }

  private load(how: 'override' | 'merge', text: string): string {
    const { tree, errors } = JunosTree.load(text, how === 'merge' ? this.candidate().clone() : undefined);
    // What was read is loaded even when some statements were not.
    this.db.candidate = tree;
    return errors.length ? `${errors.join('\n')}\nload complete (${errors.length} errors)\n` : 'load complete\n';
  }
}
