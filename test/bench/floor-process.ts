/**
 * The floor's own process (fleet.ts workFloor): runs a benchmark's floor work on request over
 * IPC and answers its time, failures, results and records. Ends with the benchmark.
 */
import type { DeviceTarget } from '../../agent/src/drivers/types';
import { runFloorWork } from './fleet';
import type { FloorWorkName } from './floor-work';

interface FloorCall {
  call: number;
  name: FloorWorkName;
  targets: DeviceTarget[];
  limits: { sessions: number; connects: number };
}

process.on('message', (m: FloorCall) => {
  void runFloorWork(m.name, m.targets, m.limits).then((run) => process.send!({ call: m.call, ...run }));
});
// The benchmark ended (or died): so does its floor, which would otherwise keep the simulator busy for nothing.
process.on('disconnect', () => process.exit(0));
