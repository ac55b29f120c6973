/** One line of the API's whole-file diff: ' ' kept, '-' removed, '+' added. */
export interface DiffLine {
  kind: 'same' | 'removed' | 'added';
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

/** Reads the API's diff text (every line prefixed by '-', '+' or ' ') with line numbers on each side. */
export function parseDiff(diff: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  for (const raw of diff.split('\n')) {
    if (raw === '') continue;
    const mark = raw[0];
    const text = raw.slice(1);
    if (mark === '-') lines.push({ kind: 'removed', text, oldNo: ++oldNo, newNo: null });
    else if (mark === '+') lines.push({ kind: 'added', text, oldNo: null, newNo: ++newNo });
    else if (mark === ' ') lines.push({ kind: 'same', text, oldNo: ++oldNo, newNo: ++newNo });
  }
  return lines;
}

/** Pairs removed and added runs side by side; unchanged lines stand on both sides. */
export function sideBySide(lines: DiffLine[]): { left: DiffLine | null; right: DiffLine | null }[] {
  const rows: { left: DiffLine | null; right: DiffLine | null }[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === 'same') {
      rows.push({ left: lines[i], right: lines[i] });
      i += 1;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (i < lines.length && lines[i].kind === 'removed') removed.push(lines[i++]);
    while (i < lines.length && lines[i].kind === 'added') added.push(lines[i++]);
    for (let k = 0; k < Math.max(removed.length, added.length); k += 1) rows.push({ left: removed[k] ?? null, right: added[k] ?? null });
  }
  return rows;
}
