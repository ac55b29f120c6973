/**
 * FortiOS-style `config …` / `end` blocks, found in one pass over a text. A lazy regex reaching from
 * an opening to its `end` (`^(\s*)config …[\s\S]*?^\1end\b`) rescans the rest of the text from every
 * opening that has none: a device that sends many unclosed openings made masking O(openings × length)
 * on the controller's event loop.
 */

/** A line that can close a block: `end`, its indentation captured (a block closes at its opening's). */
const END_LINE = /^([ \t]*)end\b/gm;

/**
 * `text` with each block that `opening` starts given to `replace`. `opening` has the g and m flags
 * and captures its line's indentation first (`^([ \t]*)config …`). A block runs from its opening's
 * line start to the end of the first later `end` line with the same indentation; an opening with no
 * such line stays as it is, and so does one inside a block already replaced.
 */
export function replaceBlocks(text: string, opening: RegExp, replace: (block: string) => string): string {
  let endAfter: ReturnType<typeof endLines> | undefined;
  let out = '';
  let done = 0;
  for (const open of text.matchAll(opening)) {
    if (open.index < done) continue;
    endAfter ??= endLines(text);
    const close = endAfter(open[1], open.index + open[0].length);
    if (close === undefined) continue;
    out += text.slice(done, open.index) + replace(text.slice(open.index, close));
    done = close;
  }
  return out + text.slice(done);
}

/**
 * The `end` lines of `text` indexed once by indentation, and a look-up of where the first one of an
 * indentation at or after `from` ends. Openings are looked up in text order, so each indentation's
 * list is read forward once: the whole scan stays linear.
 */
function endLines(text: string): (indent: string, from: number) => number | undefined {
  const starts = new Map<string, number[]>();
  for (const end of text.matchAll(END_LINE)) {
    const list = starts.get(end[1]);
    if (list) list.push(end.index);
    else starts.set(end[1], [end.index]);
  }
  const next = new Map<string, number>();
  return (indent, from) => {
    const list = starts.get(indent) ?? [];
    let i = next.get(indent) ?? 0;
    while (i < list.length && list[i] < from) i += 1;
    next.set(indent, i);
    return i < list.length ? list[i] + indent.length + 'end'.length : undefined;
  };
}
