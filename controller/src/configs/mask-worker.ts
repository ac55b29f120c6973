import { workerData } from 'node:worker_threads';
import { serveTasks } from '../platform/worker-tasks';
import { secretMasker } from './config-secrets';
import { doMaskWork, type MaskWork, type ShownDiff } from './mask-work';

/**
 * Worker-thread side of the mask pool (mask-pool.ts): masks one device's text at a time with the
 * controller's mask key, or diffs two of its texts, so that a long text packed with secrets (or two
 * long versions) takes a worker's time, not the event loop's.
 */
const masker = secretMasker(Buffer.from(workerData.key as Uint8Array));

serveTasks((work: MaskWork): string | ShownDiff => doMaskWork(work, masker));
