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
  /** Indented lines printed under the row (CPU, floors). */
  notes: string[];
}

/** One round: its ROUND_HEADER row, its phases, then its notes. */
export function printRound({ round, devices, e2e, outcomes, floor, notes }: RoundFigures): void {
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
}

/** The machine's load average now, as the benchmarks close. */
export const loadAverageLine = (): string =>
  `machine load average now: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;

/** The machine's load average now, then the target. */
export function printClosing(target: string): void {
  console.log(loadAverageLine());
  console.log(`target: ${target}`);
}
