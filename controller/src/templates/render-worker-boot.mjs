// Worker entry: loads the TypeScript render worker through tsx when the controller runs from
// source (npm start, vitest), or the compiled worker directly.
import { workerData } from 'node:worker_threads';

if (workerData.tsxApi) {
  const { register } = await import(workerData.tsxApi);
  register();
}
await import(workerData.entry);
