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

/** Unified line diff of two texts (3 lines of context) with its counts; '' when identical. */
export function unifiedDiff(before: string, after: string): { diff: string; additions: number; deletions: number } {
  if (before === after) return { diff: '', additions: 0, deletions: 0 };
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, { context: 3 });
  let additions = 0;
  let deletions = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) additions += 1;
      else if (line.startsWith('-')) deletions += 1;
    }
  }
  return { diff: hunksText(patch.hunks), additions, deletions };
}
