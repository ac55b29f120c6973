/**
 * Where the CPU went during a benchmark phase: CPU seconds (user + system) per process from
 * /proc, so a ratio can be explained (which process grew) rather than only stated.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ). */
const TICK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * A process's name and CPU seconds from /proc/<pid>/stat: its own (utime + stime) and with its
 * reaped children's (+ cutime + cstime). Throws once the process is gone.
 */
function statOf(pid: number | string): { name: string; cpu: number; withChildren: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const end = stat.lastIndexOf(')');
  // The fields after the name, from the state on: utime, stime, cutime and cstime are 11 to 14.
  const [utime, stime, cutime, cstime] = stat
    .slice(end + 2)
    .split(' ')
    .slice(11, 15)
    .map(Number);
  return { name: stat.slice(stat.indexOf('(') + 1, end), cpu: (utime + stime) / TICK, withChildren: (utime + stime + cutime + cstime) / TICK };
}

/** CPU seconds and resident memory of one process; zeros once it is gone. */
export function usage(pid: number): { cpu: number; rssMb: number; peakMb: number } {
  try {
    const { cpu } = statOf(pid);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { cpu, rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return { cpu: 0, rssMb: 0, peakMb: 0 };
  }
}

/**
 * CPU seconds of every process named `name` on the machine (PostgreSQL's backends, nats-server),
 * with their reaped children's: a backend that exits during the measurement moves its time into
 * the postmaster's, instead of vanishing from the sum (which once read "postgres -0.8").
 */
export function cpuOfNamed(name: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = statOf(pid);
      if (stat.name === name) total += stat.withChildren;
    } catch {
      // ended while reading
    }
  }
  return total;
}

export const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Named groups of processes; `this` is the benchmark process itself. */
export type CpuGroups = Record<string, () => number>;

export const processCpu = (pids: () => number[]) => () => sum(pids().map((pid) => usage(pid).cpu));
export const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Starts counting; the answer stops it and renders "group 1.2 s, …, in all 5.0 s (5.0 ms per device)". */
export function cpuMeter(groups: CpuGroups): (perItems?: number) => { text: string; total: number; by: Record<string, number> } {
  const at = (): Record<string, number> => Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f()]));
  const before = at();
  return (perItems) => {
    const after = at();
    const by = Object.fromEntries(Object.keys(groups).map((k) => [k, after[k] - before[k]]));
    const total = sum(Object.values(by));
    const per = perItems ? ` (${((total * 1000) / perItems).toFixed(1)} ms per device)` : '';
    return {
      by,
      total,
      text: `${Object.entries(by)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', ')}; in all ${total.toFixed(2)} CPU s${per}`,
    };
  };
}
