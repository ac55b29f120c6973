/**
 * The CLI dry run's "after" side: the rendered lines typed into a model of the running config,
 * since a CLI has no candidate to read back. The model is the IOS-like one (IOS, IOS-XE, IOS-XR,
 * NX-OS, EOS): top-level lines, each with its indented sub-lines.
 *
 * - an unindented line is top-level: an existing one is entered (its block takes the indented
 *   lines that follow), a new one is added before the final `end`;
 * - an indented line goes into the block last entered; `exit` leaves it;
 * - `no X` removes the line X (with its block) or the lines starting with `X `;
 * - settings that hold one value (hostname, description, ip address, mtu, …) replace the line with
 *   the same leading words instead of adding a second one.
 *
 * What a real device does differs where it expands, reorders or refuses lines; the docs say so.
 * For `set`/`delete` dialects (Junos, PAN-OS) whose config is not in that form, the lines are
 * shown as added at the end (see approximateSetLines).
 */

const SINGLE_VALUED = [
  /^hostname /,
  /^ip domain[ -]name /,
  /^snmp-server (location|contact) /,
  /^clock timezone /,
  /^banner motd /,
  /^description /,
  /^mtu /,
  /^name /,
  /^ip address /,
  /^ipv4 address /,
  /^ipv6 address /,
  /^switchport mode /,
  /^switchport access vlan /,
  /^speed /,
  /^duplex /,
  /^router-id /,
  /^bgp router-id /,
  /^load-interval /,
  /^bandwidth /,
  /^encapsulation /,
  /^vrf (forwarding|member) /,
];
const IGNORED = /^(end|configure terminal|conf t|configure|!.*|#.*)$/;

interface Block {
  header: string;
  children: string[];
}

function parse(text: string): { blocks: Block[]; trailer: string[] } {
  const lines = text.replace(/\n$/, '').split('\n');
  const blocks: Block[] = [];
  // A final `end` stays last.
  const trailer = lines.length > 0 && lines[lines.length - 1].trim() === 'end' ? [lines.pop()!] : [];
  for (const line of lines) {
    if (/^\s+\S/.test(line) && blocks.length > 0) blocks[blocks.length - 1].children.push(line);
    else blocks.push({ header: line, children: [] });
  }
  return { blocks, trailer };
}

const singleKey = (line: string): RegExp | undefined => SINGLE_VALUED.find((re) => re.test(line.trim()));

/** Removes `target` (exact) or the lines starting with `target `; answers whether any went. */
function removeFrom<T>(items: T[], text: (item: T) => string, target: string): boolean {
  const before = items.length;
  for (let i = items.length - 1; i >= 0; i--) {
    const t = text(items[i]).trim();
    if (t === target || t.startsWith(`${target} `)) items.splice(i, 1);
  }
  return items.length !== before;
}

/** The running config with the CLI lines typed in configuration mode (IOS-like model). */
export function applyCliLines(running: string, rendered: string): string {
  const { blocks, trailer } = parse(running);
  let current: Block | undefined;
  for (const raw of rendered.split('\n')) {
    const line = raw.replace(/\s+$/, '');
    const trimmed = line.trim();
    if (trimmed === '' || IGNORED.test(trimmed)) continue;
    if (trimmed === 'exit') {
      current = undefined;
      continue;
    }
    const indented = /^\s/.test(line) && current !== undefined;
    const negated = trimmed.startsWith('no ') ? trimmed.slice(3) : null;
    if (indented) {
      const block = current!;
      const pad = block.children[0]?.match(/^\s+/)?.[0] ?? ' ';
      if (negated !== null) removeFrom(block.children, (c) => c, negated);
      else if (!block.children.some((c) => c.trim() === trimmed)) {
        const key = singleKey(trimmed);
        const at = key ? block.children.findIndex((c) => key.test(c.trim())) : -1;
        if (at >= 0) block.children[at] = `${pad}${trimmed}`;
        else block.children.push(`${pad}${trimmed}`);
      }
      continue;
    }
    if (negated !== null) {
      removeFrom(blocks, (b) => b.header, negated);
      current = undefined;
      continue;
    }
    current = blocks.find((b) => b.header.trim() === trimmed);
    if (current) continue;
    const key = singleKey(trimmed);
    const existing = key ? blocks.find((b) => key.test(b.header.trim())) : undefined;
    if (existing) {
      existing.header = trimmed;
      current = existing;
    } else {
      current = { header: trimmed, children: [] };
      blocks.push(current);
    }
  }
  const lines = blocks.flatMap((b) => [b.header, ...b.children]).concat(trailer);
  return lines.join('\n') + '\n';
}

/**
 * `set`/`delete` dialects: a config shown as `set` lines gets `set X` added (when absent) and
 * `delete X` removing the `set X…` lines; any other form gets the rendered lines appended as
 * they would be typed.
 */
export function approximateSetLines(running: string, rendered: string): string {
  const lines = running.replace(/\n$/, '').split('\n');
  const setForm = lines.some((l) => l.startsWith('set '));
  const typed = rendered
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !IGNORED.test(l) && l !== 'commit');
  if (!setForm) return [...lines, ...typed].join('\n') + '\n';
  for (const line of typed) {
    if (line.startsWith('delete ')) removeFrom(lines, (l) => l, `set ${line.slice(7)}`);
    else if (!lines.includes(line)) lines.push(line);
  }
  return lines.join('\n') + '\n';
}
