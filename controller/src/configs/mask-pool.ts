import { workerEntry } from '../platform/worker-entry';
import { WorkerPool, type TaskFailure } from '../platform/worker-pool';
import { secretMasker, type DeviceText, type SecretMasker } from './config-secrets';
import { doMaskWork, workSize, type MaskWork, type ShownDiff, type TextsToDiff } from './mask-work';

/**
 * Texts shorter than this (characters) are masked on the event loop. Measured on a two-core machine:
 * a worker's round trip costs 0.1 ms plus the copy (~5 ms for 256 KiB), while masking 64 KiB on
 * the loop costs ~4 ms for a real config and at most ~70 ms for one packed with secrets (the worst
 * a short text can then stall every other request; 256 KiB would allow ~270 ms). Most configs are
 * shorter and never wait for a worker to start (0.5–2 s on first use) or behind a long text.
 */
export const INLINE_BELOW = 64 * 1024;

const MIB = 1 << 20;

/** Masking that a limit stopped (time, memory) or that failed in its worker: the text cannot be shown masked. */
export class MaskError extends Error {
  override name = 'MaskError';
}

export interface MaskPoolOptions {
  /** Worker threads, started on first use. */
  size?: number;
  /**
   * Time one text may take in a worker. Masking is linear: what fits in a worker's heap masks in
   * seconds (a real 65 MiB transcript in 11 s, an 8 MiB one packed with secrets in 7 s, on a loaded
   * two-core machine), so the limit stops only a runaway (a rule gone superlinear, a heap thrashing
   * near its limit) before the viewer gives up.
   */
  timeoutMs?: number;
  /**
   * Heap limit of each worker. Node lets a --max-old-space-size of the process override it, so
   * under `npm run controller` (256) each worker may hold about 300 MB, whatever is set here.
   */
  memoryMb?: number;
  /** Texts shorter than this many characters are masked on the event loop (INLINE_BELOW). */
  inlineBelow?: number;
}

const DEFAULTS: Required<MaskPoolOptions> = { size: 2, timeoutMs: 60_000, memoryMb: 256, inlineBelow: INLINE_BELOW };

/**
 * Masks devices' texts (maskDeviceText) with the controller's mask key: short ones on the event
 * loop, long ones in worker threads, so that a device's config packed with secrets (0.8 s per MiB,
 * 25 s for the 32 MiB an agent passes on) does not stop every other request while it is shown.
 * Each text in a worker gets a time limit, each worker a heap limit; a worker that hits either is
 * replaced and the text fails with a MaskError saying which.
 */
export class MaskPool {
  private readonly masker: SecretMasker;
  private readonly inlineBelow: number;
  private readonly workers: WorkerPool<MaskWork, string | ShownDiff>;

  /** `key`: the 32-byte HMAC key of the masks (the workers build their masker from it). */
  constructor(key: Buffer, options: MaskPoolOptions = {}) {
    const { inlineBelow, ...limits } = { ...DEFAULTS, ...options };
    this.masker = secretMasker(key);
    this.inlineBelow = inlineBelow;
    this.workers = new WorkerPool({
      ...limits,
      worker: workerEntry(import.meta.url, 'mask-worker'),
      workerData: { key: new Uint8Array(key) },
      // A long text takes seconds already: once the pool is in use, none should also wait for a worker to start.
      startAll: true,
      closedMessage: 'the mask pool is closed',
      failed: stopped,
      notStarted: (failure) => new Error(`the mask workers could not start: ${what(failure)}`),
    });
  }

  /** The text masked, in a worker when it is long; MaskError when a limit stopped it. */
  async mask(text: DeviceText): Promise<string> {
    return (await this.do({ mask: text })) as string;
  }

  /** Two texts diffed as shown (each masked first unless given as a string), in a worker when they are long. */
  async diff(texts: TextsToDiff): Promise<ShownDiff> {
    return (await this.do({ diff: texts })) as ShownDiff;
  }

  private async do(work: MaskWork): Promise<string | ShownDiff> {
    if (workSize(work) < this.inlineBelow) return doMaskWork(work, this.masker);
    return this.workers.run(work);
  }

  /** Texts in a worker or waiting for one. */
  get busy(): number {
    return this.workers.busy;
  }

  /** The text masked on the event loop whatever its length: for text known to be short. */
  maskHere(text: DeviceText): string {
    return doMaskWork({ mask: text }, this.masker) as string;
  }

  /** One value's keyed mask (`<secret:xxxxxxxx>`), as the texts show it (secret variables). */
  maskValue(value: string): string {
    return this.masker(value);
  }

  close(): Promise<void> {
    return this.workers.close();
  }
}

/** The MaskError of a text that `failure` stopped. */
const stopped = (work: MaskWork, failure: TaskFailure) =>
  new MaskError(`${'mask' in work ? 'masking the secrets of' : 'diffing'} ${(workSize(work) / MIB).toFixed(1)} MiB of text ${what(failure)}`);

/** What the masking did, as its error says it. */
function what(failure: TaskFailure): string {
  switch (failure.kind) {
    case 'timeout':
      return `took longer than ${failure.ms / 1000} s; try again when the controller is less busy`;
    case 'memory':
      return `needed more than the ${failure.heapMb} MB of memory a worker may use (as a text packed with millions of secrets does)`;
    case 'error':
      return `failed: ${failure.message}`;
    case 'exited':
      return 'failed: the mask worker stopped';
  }
}
