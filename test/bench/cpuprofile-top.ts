/**
 * Summarizes a V8 CPU profile (the console bench's `--profile DIR`, or `SB_CPU_PROF_DIR`):
 * `npx tsx test/bench/cpuprofile-top.ts FILE [N]` prints the busy time, then the N functions with
 * the most self time, the scripts that time was spent in, and the busy time per 50 ms.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(root)']);

/** Busy time per 50 ms window from the profile's start, with the functions that took most of it. */
function timeline(profile: CpuProfile): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const windows = new Map<number, Map<string, number>>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    at += delta;
    const frame = nodes.get(id)!.callFrame;
    if (IDLE.has(frame.functionName)) return;
    const slot = windows.get(Math.floor(at / 50)) ?? new Map<string, number>();
    windows.set(Math.floor(at / 50), slot);
    const name = frame.functionName || '(anonymous)';
    slot.set(name, (slot.get(name) ?? 0) + delta);
  });
  console.log('busy per 50 ms:');
  for (const [slot, fns] of [...windows].sort((a, b) => a[0] - b[0])) {
    const busy = [...fns.values()].reduce((a, b) => a + b, 0);
    const names = top(fns, 4).map(([name, ms]) => `${name} ${ms.toFixed(0)}`);
    console.log(`  ${String(slot * 50).padStart(5)} ms  ${busy.toFixed(0).padStart(3)} busy  ${names.join(', ')}`);
  }
}

/** Self time (ms) of each profile node, from the samples and the time between them. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  return self;
}

function top(entries: Map<string, number>, n: number): [string, number][] {
  return [...entries].sort((a, b) => b[1] - a[1]).slice(0, n);
}

function main(file: string, n: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const self = selfTimes(profile);
  const byFunction = new Map<string, number>();
  const byScript = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    total += ms;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)') idle += ms;
    const script = url.replace(/^https?:\/\/[^/]+/, '') || `(${functionName || 'native'})`;
    byScript.set(script, (byScript.get(script) ?? 0) + ms);
    const where = url ? `${script}:${lineNumber + 1}:${columnNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  }
  console.log(`${file}: ${total.toFixed(0)} ms sampled, ${(total - idle).toFixed(0)} ms busy`);
  console.log('self time by function:');
  for (const [key, ms] of top(byFunction, n)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${key}`);
  console.log('self time by script:');
  for (const [key, ms] of top(byScript, 12)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${key}`);
  timeline(profile);
}

main(process.argv[2], Number(process.argv[3] ?? 25));
