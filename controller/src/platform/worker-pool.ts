import { Worker } from 'node:worker_threads';
import type { WorkerModule } from './worker-entry';
import type { TaskMessage, TaskReply, WorkerReady } from './worker-tasks';

/** Why a task ended without a value: its pool turns each into its own error (WorkerPoolOptions.failed). */
export type TaskFailure =
  | { kind: 'timeout'; ms: number }
  /** The worker ran out of heap; `heapMb` is its limit as the worker reported it. */
  | { kind: 'memory'; heapMb: number }
  /** The task threw in its worker (which goes on), or the worker itself failed. */
  | { kind: 'error'; message: string }
  | { kind: 'exited' };

export interface WorkerPoolOptions<T> {
  /** The module the workers run: it calls serveTasks (worker-tasks.ts). */
  worker: WorkerModule;
  /** Read by the worker module (workerData), besides what the pool passes itself. */
  workerData?: Record<string, unknown>;
  /** Worker threads, started on first use. */
  size: number;
  /** Time a task may take, unless run() is given another. */
  timeoutMs: number;
  /** Heap limit of each worker (old generation, and optionally young generation). */
  memoryMb: number;
  youngGenerationMb?: number;
  /**
   * true: every worker starts at first use and one that stopped is replaced at once, so that a task
   * rarely waits for a start (0.5–2 s). false: a worker starts only when a task finds all the others
   * busy, one start at a time, so that a pool that mostly sees one task at a time holds one heap.
   */
  startAll?: boolean;
  /** The message of the error that tasks get once the pool is closed. */
  closedMessage: string;
  /** The error a task ends with; `progress` is where the worker said it was in the task (serveTasks). */
  failed(task: T, failure: TaskFailure, progress: number): Error;
  /** The error the waiting tasks end with when no worker could start. */
  notStarted(failure: TaskFailure): Error;
}

interface Job<T, R> {
  id: number;
  task: T;
  timeoutMs: number;
  resolve(value: R): void;
  reject(error: Error): void;
}

interface Slot<T, R> {
  worker: Worker;
  progress: Int32Array;
  ready: boolean;
  heapMb: number;
  job: Job<T, R> | null;
  timer: NodeJS.Timeout | null;
}

/**
 * Runs tasks of type T in worker threads, one at a time per worker, the rest queued in order, so
 * that work which may run long or grow large takes a worker's time and heap, not the event loop's.
 * Each task gets a time limit and each worker a heap limit; a worker that hits either, crashes or
 * stops is dropped and replaced, and its task ends with the pool's own error for what happened.
 */
export class WorkerPool<T, R> {
  private readonly slots: Slot<T, R>[] = [];
  private readonly queue: Job<T, R>[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions<T>) {}

  /** The task's value from a worker; rejects with the pool's error when it fails or a limit stops it. */
  run(task: T, timeoutMs = this.options.timeoutMs): Promise<R> {
    if (this.closed) return Promise.reject(new Error(this.options.closedMessage));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, timeoutMs, resolve, reject });
      this.dispatch();
    });
  }

  /** Tasks in a worker or waiting for one. */
  get busy(): number {
    return this.queue.length + this.slots.filter((slot) => slot.job).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error(this.options.closedMessage);
    for (const job of this.queue.splice(0)) job.reject(closed);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        this.release(slot)?.reject(closed);
        return slot.worker.terminate();
      }),
    );
  }

  /** Gives each free worker the next task, and starts workers as `startAll` says. */
  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.ready && !slot.job && this.queue.length > 0) this.start(slot, this.queue.shift()!);
    }
    const { size, startAll } = this.options;
    if (startAll) while (this.slots.length < size) this.spawn();
    else if (this.slots.length < size && this.queue.length > 0 && this.slots.every((slot) => slot.ready)) this.spawn();
  }

  private spawn(): void {
    const { worker: module, workerData, memoryMb, youngGenerationMb } = this.options;
    const progress = new SharedArrayBuffer(4);
    const worker = new Worker(module.boot, {
      workerData: { ...workerData, entry: module.entry, progress },
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: youngGenerationMb },
    });
    // A pool waiting for work must not keep the process alive.
    worker.unref();
    const slot: Slot<T, R> = { worker, progress: new Int32Array(progress), ready: false, heapMb: memoryMb, job: null, timer: null };
    worker.on('message', (message: TaskReply<R> | WorkerReady) => this.received(slot, message));
    worker.on('error', (err: Error & { code?: string }) =>
      this.fail(slot, err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { kind: 'memory', heapMb: slot.heapMb } : { kind: 'error', message: err.message }),
    );
    // After an 'error' too, when fail has already dropped the slot.
    worker.on('exit', () => this.fail(slot, { kind: 'exited' }));
    this.slots.push(slot);
  }

  private start(slot: Slot<T, R>, job: Job<T, R>): void {
    Atomics.store(slot.progress, 0, 0);
    slot.job = job;
    slot.timer = setTimeout(() => this.fail(slot, { kind: 'timeout', ms: job.timeoutMs }), job.timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id: job.id, task: job.task } satisfies TaskMessage<T>);
  }

  private received(slot: Slot<T, R>, message: TaskReply<R> | WorkerReady): void {
    if (!this.slots.includes(slot)) return;
    if ('ready' in message) [slot.ready, slot.heapMb] = [true, message.heapMb];
    else if (slot.job?.id === message.id) {
      const progress = Atomics.load(slot.progress, 0);
      const job = this.release(slot)!;
      if (message.ok) job.resolve(message.value);
      else job.reject(this.options.failed(job.task, { kind: 'error', message: message.error }, progress));
    }
    this.dispatch();
  }

  /** Ends the slot's task with the pool's error for `failure`, and drops the worker (dispatch replaces it). */
  private fail(slot: Slot<T, R>, failure: TaskFailure): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    void slot.worker.terminate();
    if (!slot.ready) return this.notStarted(failure);
    const job = this.release(slot);
    job?.reject(this.options.failed(job.task, failure, Atomics.load(slot.progress, 0)));
    this.dispatch();
  }

  /**
   * A worker that never started: once none is left, the waiting tasks fail rather than wait for
   * ever, and the next task tries to start the workers again (not at once: that could loop).
   */
  private notStarted(failure: TaskFailure): void {
    if (this.slots.length > 0) return;
    const error = this.options.notStarted(failure);
    for (const job of this.queue.splice(0)) job.reject(error);
  }

  private release(slot: Slot<T, R>): Job<T, R> | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    return job;
  }
}
