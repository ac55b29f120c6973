import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { maskDeviceText, secretMasker, type DeviceText } from './config-secrets';

/**
 * Worker-thread side of the mask pool (mask-pool.ts): masks one device's text at a time with the
 * controller's mask key, so that a long text packed with secrets takes a worker's time, not the
 * event loop's.
 */
export interface MaskRequest {
  id: number;
  job: DeviceText;
}
export type MaskReply = { id: number; ok: true; text: string } | { id: number; ok: false; error: string };
/** Sent once started, with the heap limit in force (a --max-old-space-size of the process overrides the pool's). */
export interface MaskReady {
  ready: true;
  heapMb: number;
}

const mask = secretMasker(Buffer.from(workerData.key as Uint8Array));

parentPort!.on('message', ({ id, job }: MaskRequest) => {
  let reply: MaskReply;
  try {
    reply = { id, ok: true, text: maskDeviceText(job, mask) };
  } catch (err) {
    reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage({ ready: true, heapMb: Math.round(getHeapStatistics().heap_size_limit / (1 << 20)) } satisfies MaskReady);
