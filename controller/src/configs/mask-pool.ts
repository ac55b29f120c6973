import { Worker } from 'node:worker_threads';
import { workerEntry } from '../platform/worker-entry';
import { secretMasker, type DeviceText, type SecretMasker } from './config-secrets';
import { doMaskWork, workSize, type MaskWork, type ShownDiff, type TextsToDiff } from './mask-work';
import type { MaskReady, MaskReply, MaskRequest } from './mask-worker';

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

interface Job {
  id: number;
  work: MaskWork;
  resolve(value: string | ShownDiff): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** The worker's heap limit as it reports it (the MB a memory error names). */
  heapMb: number;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

/**
 * Masks devices' texts (maskDeviceText) with the controller's mask key: short ones on the event
 * loop, long ones in worker threads, so that a device's config packed with secrets (0.8 s per MiB,
 * 25 s for the 32 MiB an agent passes on) does not stop every other request while it is shown.
 * Each text in a worker gets a time limit, each worker a heap limit; a worker that hits either is
 * replaced and the text fails with a MaskError saying which.
 */
export class MaskPool {
  private readonly masker: SecretMasker;
  private readonly options: Required<MaskPoolOptions>;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  /** `key`: the 32-byte HMAC key of the masks (the workers build their masker from it). */
  constructor(
    private readonly key: Buffer,
    options: MaskPoolOptions = {},
  ) {
    this.masker = secretMasker(key);
    this.options = { ...DEFAULTS, ...options };
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
    if (workSize(work) < this.options.inlineBelow) return doMaskWork(work, this.masker);
    if (this.closed) throw new Error('the mask pool is closed');
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, work, resolve, reject });
      this.dispatch();
    });
  }

  /** Texts in a worker or waiting for one. */
  get busy(): number {
    return this.queue.length + this.slots.filter((slot) => slot.job).length;
  }

  /** The text masked on the event loop whatever its length: for text known to be short. */
  maskHere(text: DeviceText): string {
    return doMaskWork({ mask: text }, this.masker) as string;
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error('the mask pool is closed');
    for (const job of this.queue.splice(0)) job.reject(closed);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        this.release(slot)?.reject(closed);
        return slot.worker.terminate();
      }),
    );
  }

  /** Starts the workers (on first use, and in place of one that stopped) and gives each free one the next text. */
  private dispatch(): void {
    if (this.closed) return;
    while (this.slots.length < this.options.size) this.spawn();
    for (const slot of this.slots) {
      if (slot.ready && !slot.job && this.queue.length > 0) this.run(slot, this.queue.shift()!);
    }
  }

  private spawn(): void {
    const { boot, entry } = workerEntry(import.meta.url, 'mask-worker');
    const worker = new Worker(boot, {
      workerData: { entry, key: new Uint8Array(this.key) },
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
    });
    worker.unref();
    const slot: Slot = { worker, ready: false, heapMb: this.options.memoryMb, job: null, timer: null };
    worker.on('message', (message: MaskReply | MaskReady) => this.received(slot, message));
    worker.on('error', (err: Error & { code?: string }) =>
      this.fail(
        slot,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `needed more than the ${slot.heapMb} MB of memory a worker may use (as a text packed with millions of secrets does)`
          : `failed: ${err.message}`,
      ),
    );
    worker.on('exit', () => this.fail(slot, 'failed: the mask worker stopped'));
    this.slots.push(slot);
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    const { timeoutMs } = this.options;
    slot.timer = setTimeout(() => this.fail(slot, `took longer than ${timeoutMs / 1000} s; try again when the controller is less busy`), timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id: job.id, ...job.work } satisfies MaskRequest);
  }

  private received(slot: Slot, message: MaskReply | MaskReady): void {
    if (!this.slots.includes(slot)) return;
    if ('ready' in message) [slot.ready, slot.heapMb] = [true, message.heapMb];
    else if (slot.job?.id === message.id) {
      const job = this.release(slot)!;
      if (message.ok) job.resolve(message.value);
      else job.reject(stopped(job, `failed: ${message.error}`));
    }
    this.dispatch();
  }

  /** Ends the slot's text with a MaskError saying `what` it did, and drops the worker (dispatch replaces it). */
  private fail(slot: Slot, what: string): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    void slot.worker.terminate();
    if (!slot.ready) return this.notStarted(what);
    const job = this.release(slot);
    job?.reject(stopped(job, what));
    this.dispatch();
  }

  /**
   * A worker that never started: once none is left, the waiting texts fail rather than wait for
   * ever, and the next text tries to start the workers again (not at once: that could loop).
   */
  private notStarted(what: string): void {
    if (this.slots.length > 0) return;
    const error = new Error(`the mask workers could not start: ${what}`);
    for (const job of this.queue.splice(0)) job.reject(error);
  }

  private release(slot: Slot): Job | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    return job;
  }
}

const stopped = (job: Job, what: string) =>
  new MaskError(`${'mask' in job.work ? 'masking the secrets of' : 'diffing'} ${(workSize(job.work) / MIB).toFixed(1)} MiB of text ${what}`);
