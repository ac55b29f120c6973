/**
 * The CLI dry run for Junos-like configs shown in braces: `set` and `delete` lines applied to
 * the statement tree of `show configuration`, without the device's schema. Which words open a
 * statement is guessed: an existing statement is matched by its first word or its first two;
 * a keyword that names an instance (`unit 0`, `group ext`, `server 192.0.2.1`) takes the word
 * after it; the last one or two words (or a keyword that holds one value) end as `words;`; a
 * value keyword set again replaces its line. Untouched lines keep their exact text.
 */

interface Statement {
  /** The line as shown (header `x {` or leaf `x y;`), or null for the root. */
  line: string | null;
  words: string[];
  children: Statement[] | null;
  /** The closing `}` line of a block. */
  close?: string;
}

const NAMED = new Set(
  'unit family address server route area interface user group neighbor community policy-statement term filter prefix-list host file'.split(' '),
);
const VALUE = new Set(
  (
    'version host-name domain-name time-zone encrypted-password uid class full-name description next-hop mtu vlan-id router-id ' +
    'autonomous-system peer-as local-address type preference metric location contact'
  ).split(' '),
);
const INDENT = '    ';

/** Words of a statement line: quoted strings kept whole; `{`, `}`, `;` and `## comments` dropped. */
function words(text: string): string[] {
  return text.replace(/\s##.*$/, '').match(/"(?:[^"\\]|\\.)*"|[^\s{};]+/g) ?? [];
}

function parse(text: string): Statement {
  const root: Statement = { line: null, words: [], children: [] };
  const stack = [root];
  for (const line of text.replace(/\n$/, '').split('\n')) {
    const top = stack[stack.length - 1];
    const t = line.trim();
    if (t === '}' && stack.length > 1) {
      top.close = line;
      stack.pop();
    } else if (t.endsWith('{')) {
      const block: Statement = { line, words: words(t), children: [] };
      top.children!.push(block);
      stack.push(block);
    } else top.children!.push({ line, words: words(t), children: null });
  }
  return root;
}

/** Lines of a statement: its own text when it was parsed, else built at its depth. */
function render(node: Statement, depth: number, out: string[]): void {
  const pad = INDENT.repeat(depth);
  out.push(node.line ?? `${pad}${node.words.join(' ')}${node.children ? ' {' : ';'}`);
  if (!node.children) return;
  for (const child of node.children) render(child, depth + 1, out);
  out.push(node.close ?? `${pad}}`);
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((w, i) => w === b[i]);

/** The child statement matching the start of `path` and how many words it took. */
function find(node: Statement, path: string[]): { child: Statement; used: number } | null {
  for (const used of [2, 1]) {
    const child = node.children?.find((c) => c.children && same(c.words, path.slice(0, used)));
    if (child && path.length > used) return { child, used };
  }
  return null;
}

function set(node: Statement, path: string[]): void {
  const found = find(node, path);
  if (found) return set(found.child, path.slice(found.used));
  const children = node.children!;
  const head = NAMED.has(path[0]) ? 2 : 1;
  if (path.length > head && !(VALUE.has(path[0]) || path.length <= 2)) {
    const block: Statement = { line: null, words: path.slice(0, head), children: [] };
    children.push(block);
    return set(block, path.slice(head));
  }
  if (children.some((c) => !c.children && same(c.words, path))) return;
  const leaf: Statement = { line: null, words: path, children: null };
  const replaced = VALUE.has(path[0]) ? children.findIndex((c) => !c.children && c.words[0] === path[0]) : -1;
  if (replaced >= 0) return void (children[replaced] = leaf);
  let at = -1;
  children.forEach((c, i) => (c.words[0] === path[0] ? (at = i) : undefined));
  children.splice(at >= 0 ? at + 1 : children.length, 0, leaf);
}

function remove(node: Statement, path: string[]): void {
  const found = find(node, path);
  if (found) return remove(found.child, path.slice(found.used));
  node.children = node.children!.filter((c) => !(c.words.length >= path.length && same(c.words.slice(0, path.length), path)));
}

/** The braces config with the `set`/`delete` lines applied (heuristic model, see above). */
export function applyJunosSetLines(running: string, rendered: string): string {
  const root = parse(running);
  for (const raw of rendered.split('\n')) {
    const w = words(raw.trim());
    if (w[0] === 'set' && w.length > 1) set(root, w.slice(1));
    else if (w[0] === 'delete' && w.length > 1) remove(root, w.slice(1));
  }
  const out: string[] = [];
  for (const child of root.children!) render(child, 0, out);
  return out.join('\n') + '\n';
}
