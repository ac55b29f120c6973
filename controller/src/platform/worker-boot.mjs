// Entry of the controller's worker threads (template renders, config masks): loads the worker
// module named by workerData.entry through tsx when the controller runs from source (npm start,
// vitest), or the compiled module directly.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(workerData.entry);
