// Worker entry: loads the TypeScript mask worker through tsx when the controller runs from source
// (npm start, vitest), or the compiled worker directly. The same trick as
// templates/render-worker-boot.mjs, which names the tsx API for it; here tsx is found by its package name.
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
await import(workerData.entry);
