import { structuredPatch, type StructuredPatchHunk } from 'diff';

/**
 * The hunks of a patch as API.md's diff: "@@" ranges, then lines starting with -, + or a space.
 * No file header ("--- version 1" would read as a removed line: the versions are in the answer's
 * own fields) and no "\\ No newline at end of file" notes.
 */
export function hunksText(hunks: StructuredPatchHunk[]): string {
  return hunks
    .flatMap((h) => {
      // A range of no lines names the line before it (as diff -u writes it).
      const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
      const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
      return [`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`, ...h.lines.filter((line) => !line.startsWith('\\'))];
    })
    .join('\n');
}

/**
 * Edits past which the line diff stops looking for the shortest one. Myers' algorithm costs about the
 * square of the edits: 1,000 take about 0.1 s, where two 16,000-line versions differing on every
 * other line took minutes of the controller's event loop.
 */
const MAX_EDITS = 1_000;
const CONTEXT = 3;

/** A text's lines as the diff counts them (a final newline ends the last line, it does not start another). */
const linesOf = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * The change as one hunk, in linear time, for texts too different for a minimal diff: the lines both
 * share at their start and end kept (three of them as context), everything between removed, then added.
 */
export function blockHunks(before: string, after: string): StructuredPatchHunk[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const lead = Math.min(CONTEXT, head);
  const trail = Math.min(CONTEXT, tail);
  const removed = a.slice(head, a.length - tail);
  const added = b.slice(head, b.length - tail);
  if (removed.length === 0 && added.length === 0) return [];
  const lines = [
    ...a.slice(head - lead, head).map((l) => ` ${l}`),
    ...removed.map((l) => `-${l}`),
    ...added.map((l) => `+${l}`),
    ...a.slice(a.length - tail, a.length - tail + trail).map((l) => ` ${l}`),
  ];
  const start = head - lead + 1;
  return [{ oldStart: start, oldLines: lead + removed.length + trail, newStart: start, newLines: lead + added.length + trail, lines }];
}

/**
 * Unified line diff of two texts (3 lines of context) with its counts; '' when identical. Past
 * MAX_EDITS the diff is blockHunks': correct, not minimal, and linear in the texts.
 */
export function unifiedDiff(before: string, after: string): { diff: string; additions: number; deletions: number } {
  if (before === after) return { diff: '', additions: 0, deletions: 0 };
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDITS });
  const hunks = patch?.hunks ?? blockHunks(before, after);
  let additions = 0;
  let deletions = 0;
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) additions += 1;
      else if (line.startsWith('-')) deletions += 1;
    }
  }
  return { diff: hunksText(hunks), additions, deletions };
}
