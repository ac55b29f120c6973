/**
 * What the device benchmarks print alike: a round's CSV row after its header, and the closing
 * load average and target. The targets are issue #21's, on the 2-core build machine.
 */
import { loadavg } from 'node:os';

/** End to end / floor that issue #21 asks for: over PostgreSQL + NATS, and on the embedded default of `npm start`. */
export const RATIO_TARGET = { nats: 1.6, embedded: 2.0 } as const;

export const ROUND_HEADER = 'round,end_to_end_s,devices_per_s,accepted_ms,succeeded,failed,floor_s,floor_devices_per_s,floor_failed,ratio';

export interface RoundFigures {
  round: number;
  devices: number;
  e2e: { seconds: number; acceptedMs: number; phases: string };
  /** Devices that succeeded and failed end to end. */
  outcomes: [succeeded: number, failed: number];
  floor: { seconds: number; failed: number };
  /** The pipeline floor's seconds, when the round ran it. */
  pipeline?: number;
  /** Indented lines printed under the row (CPU, floors). */
  notes: string[];
}

/** A round's two times, seconds. */
export interface RoundTimes {
  e2e: number;
  floor: number;
  /** The pipeline floor: the protocol's own floor on this machine (pipeline-floor.ts). */
  pipeline?: number;
}

/** Issue #21's fallback where its ratio is below what the protocol reaches: end to end within 10 % of the protocol's own floor. */
export const PIPELINE_TARGET = 1.1;

/** One round: its ROUND_HEADER row, its phases, then its notes. Answers its two times. */
export function printRound({ round, devices, e2e, outcomes, floor, pipeline, notes }: RoundFigures): RoundTimes {
  const row = [
    round,
    e2e.seconds.toFixed(2),
    (devices / e2e.seconds).toFixed(1),
    Math.round(e2e.acceptedMs),
    ...outcomes,
    floor.seconds.toFixed(2),
    (devices / floor.seconds).toFixed(1),
    floor.failed,
    (e2e.seconds / floor.seconds).toFixed(2),
  ];
  console.log(row.join(','));
  console.log(`  phases of round ${round} (from the API call): ${e2e.phases}`);
  console.log(notes.join('\n'));
  return { e2e: e2e.seconds, floor: floor.seconds, pipeline };
}

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The rounds' ratios in one line: the machine's speed drifts between rounds, so one round proves
 * little; the ratio of the median times leans less on one slow or fast floor than any round's.
 */
export function ratiosLine(rounds: RoundTimes[]): string {
  const ofMedians = median(rounds.map((r) => r.e2e)) / median(rounds.map((r) => r.floor));
  const line = `ratio over ${rounds.length} rounds: ${spread(rounds.map((r) => r.e2e / r.floor))}; median end to end / median floor ${ofMedians.toFixed(2)}`;
  const piped = rounds.filter((r): r is Required<RoundTimes> => r.pipeline !== undefined);
  if (piped.length < rounds.length) return line;
  return `${line}\nend to end / pipeline floor: ${spread(piped.map((r) => r.e2e / r.pipeline))} (within 10 %: ≤ ${PIPELINE_TARGET})`;
}

/** Ratios as their median and range. */
const spread = (ratios: number[]): string =>
  `median ${median(ratios).toFixed(2)}, ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;

/** The machine's load average now, as the benchmarks close. */
export const loadAverageLine = (): string =>
  `machine load average now: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;

/** The machine's load average now, the rounds' ratios when there were several, then the target. */
export function printClosing(target: string, rounds: RoundTimes[] = []): void {
  console.log(loadAverageLine());
  if (rounds.length > 1) console.log(ratiosLine(rounds));
  console.log(`target: ${target}`);
}
