/**
 * Turning what a terminal receives into the text a person would see: ANSI/VT100 escape codes
 * removed, carriage returns and backspaces applied the way a terminal applies them, pager
 * prompts removed, line endings normalized.
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL|ST), two-char escapes (ESC ( B, ESC =, ...), 8-bit CSI.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]/g;
const ANSI_AT = new RegExp(ANSI.source, 'y');
const NEEDS_EMULATION = /[\r\b\x1b\x9b]/;
// Control characters a person never sees (tab kept).
const INVISIBLE = /[\x00-\x08\x0b-\x1f\x7f]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Render one line (no \n inside) as a terminal would show it: \r returns to column 0, \b moves
 * left, ESC[K / ESC[2K erase, other escape sequences have no visible effect.
 */
export function renderLine(line: string): string {
  // A trailing \r (CRLF line ends) only moves the cursor: drop it, so the common line needs no emulation.
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
  if (end < line.length) line = line.slice(0, end);
  if (!NEEDS_EMULATION.test(line)) return line.replace(INVISIBLE, '').trimEnd();
  const cells: string[] = [];
  let col = 0;
  let i = 0;
  while (i < line.length) {
    const ch = line[i];
    if (ch === '\x1b' || ch === '\x9b') {
      ANSI_AT.lastIndex = i;
      const m = ANSI_AT.exec(line);
      if (m) {
        const seq = m[0];
        if (/^(\x1b\[|\x9b)[02]?K$/.test(seq)) {
          if (seq.includes('2K')) cells.length = 0;
          else cells.length = Math.min(cells.length, col);
        }
        i += seq.length;
        continue;
      }
      i += 1;
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\b') col = Math.max(0, col - 1);
    else if (ch === '\t' || (ch >= ' ' && ch !== '\x7f')) {
      while (cells.length < col) cells.push(' ');
      cells[col++] = ch;
    }
    i += 1;
  }
  return cells.join('').replace(INVISIBLE, '').trimEnd();
}

/** Whole received text → visible lines. `pager` patterns are removed first (see SshDialect.pager). */
export function renderLines(raw: string, pager: RegExp[] = []): string[] {
  let text = raw;
  for (const re of pager) text = text.replace(globalOf(re), '');
  return text.split('\n').map(renderLine);
}

const globalCache = new WeakMap<RegExp, RegExp>();
export function globalOf(re: RegExp): RegExp {
  let g = globalCache.get(re);
  if (!g) {
    g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    globalCache.set(re, g);
  }
  g.lastIndex = 0;
  return g;
}

const tailCache = new WeakMap<RegExp, RegExp>();
/** `re` anchored at the end of the text (allowing trailing blanks). */
export function tailOf(re: RegExp): RegExp {
  let t = tailCache.get(re);
  if (!t) {
    t = new RegExp(`(?:${re.source})[ \\t]*$`, re.flags.replace('g', ''));
    tailCache.set(re, t);
  }
  return t;
}

/** Drop leading and trailing blank lines. */
export function trimBlankLines(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a].trim() === '') a++;
  while (b > a && lines[b - 1].trim() === '') b--;
  return lines.slice(a, b);
}

export function dropMatching(lines: string[], patterns: RegExp[]): string[] {
  if (patterns.length === 0) return lines;
  return lines.filter((l) => !patterns.some((re) => re.test(l)));
}

/** Replaces every secret with ******** (longest first so one secret inside another is covered). */
export function makeMasker(secrets: Array<string | undefined>): (text: string) => string {
  const list = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (t) => t;
  const re = new RegExp(list.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (t) => t.replace(re, '********');
}

/** Characters that never occur in CLI text: used to notice a device spewing binary garbage. */
const BINARY = /[\x00-\x07\x0e-\x1a\x1c-\x1f\ufffd]/g;
export function countBinary(text: string): number {
  const m = text.match(BINARY);
  return m ? m.length : 0;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/** Device text can end up in an error message (an echoed secret, say): mask it there too. */
export function masked(e: unknown, mask: (text: string) => string): unknown {
  if (e instanceof Error) e.message = mask(e.message);
  return e;
}

/** Drops the echoed command (the first non-blank line, when it ends with the command). */
export function dropEcho(lines: string[], command: string): string[] {
  const want = command.trim();
  for (let i = 0; i < Math.min(lines.length, 2); i++) {
    const l = lines[i].trim();
    if (l === '') continue;
    if (want !== '' && l.endsWith(want)) return lines.slice(i + 1);
    break;
  }
  return lines;
}
