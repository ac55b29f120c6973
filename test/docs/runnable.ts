/**
 * Runnable documentation: the shell blocks fenced as ```sh runnable in a Markdown page, in order,
 * as one bash script. A comment line `# → TEXT` after a command states a line its output prints
 * (`…` stands for any text); consecutive ones describe the same output. The script prints a marker
 * where each group stands, so the output between two markers is what the commands between them
 * printed, and every promised line must be among them.
 */
import { readFileSync } from 'node:fs';

export interface PromisedLine {
  /** 1-based line in the page, for the failure message. */
  line: number;
  text: string;
}

export interface RunnableDoc {
  script: string;
  /** Per marker, the lines its output must contain. */
  groups: PromisedLine[][];
}

const FENCE_OPEN = /^```sh runnable\s*$/;
const PROMISE = /^\s*# → (.*)$/;
const marker = (i: number) => `@@doc-output ${i}@@`;

/** The runnable blocks of a page as one script with a marker per group of promised lines. */
export function runnableDoc(path: string): RunnableDoc {
  const lines = readFileSync(path, 'utf8').split('\n');
  const script: string[] = [];
  const groups: PromisedLine[][] = [];
  let inBlock = false;
  let open: PromisedLine[] | null = null;
  lines.forEach((line, i) => {
    if (!inBlock) {
      inBlock = FENCE_OPEN.test(line);
      return;
    }
    if (line.startsWith('```')) {
      inBlock = false;
      open = null;
      return;
    }
    const promised = PROMISE.exec(line);
    if (!promised) {
      open = null;
      script.push(line);
      return;
    }
    if (!open) {
      open = [];
      groups.push(open);
      script.push(`printf '\\n%s\\n' '${marker(groups.length - 1)}'`);
    }
    open.push({ line: i + 1, text: promised[1] });
  });
  return { script: script.join('\n') + '\n', groups };
}

/** `…` matches any text; the rest literally, the whole line. */
function matcher(text: string): RegExp {
  const parts = text
    .trimEnd()
    .split('…')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}

/** The promises the output did not keep, each with what its commands printed instead. */
export function brokenPromises(doc: RunnableDoc, output: string): string[] {
  const broken: string[] = [];
  let rest = output;
  doc.groups.forEach((group, i) => {
    const at = rest.indexOf(marker(i));
    if (at < 0) {
      broken.push(`line ${group[0].line}: the script never got here`);
      return;
    }
    const printed = rest
      .slice(0, at)
      .split('\n')
      .map((l) => l.trimEnd());
    rest = rest.slice(at + marker(i).length);
    for (const p of group) {
      const re = matcher(p.text);
      if (!printed.some((l) => re.test(l)))
        broken.push(`line ${p.line}: expected "${p.text}", the commands printed:\n${printed.filter(Boolean).join('\n').slice(-3000)}`);
    }
  });
  return broken;
}
