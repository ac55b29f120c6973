/** Helpers of the ops suites: Prometheus text parsing and polling. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition (0.0.4) into samples; HELP/TYPE lines are checked for shape. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) {
      if (line.startsWith('# ') && !/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]) });
  }
  return samples;
}

/** Sum of the samples of one metric whose labels include `match`. */
export function metric(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export function has(samples: Sample[], name: string, match: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn answers something truthy (a guard against hanging, not a timing assertion). */
export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}
