import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { secretMasker } from './config-secrets';
import { doMaskWork, type MaskWork, type ShownDiff } from './mask-work';

/**
 * Worker-thread side of the mask pool (mask-pool.ts): masks one device's text at a time with the
 * controller's mask key, or diffs two of its texts, so that a long text packed with secrets (or two
 * long versions) takes a worker's time, not the event loop's.
 */
export type MaskRequest = MaskWork & { id: number };
export type MaskReply = { id: number; ok: true; value: string | ShownDiff } | { id: number; ok: false; error: string };
/** Sent once started, with the heap limit in force (a --max-old-space-size of the process overrides the pool's). */
export interface MaskReady {
  ready: true;
  heapMb: number;
}

const masker = secretMasker(Buffer.from(workerData.key as Uint8Array));

parentPort!.on('message', ({ id, ...work }: MaskRequest) => {
  let reply: MaskReply;
  try {
    reply = { id, ok: true, value: doMaskWork(work, masker) };
  } catch (err) {
    reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage({ ready: true, heapMb: Math.round(getHeapStatistics().heap_size_limit / (1 << 20)) } satisfies MaskReady);
