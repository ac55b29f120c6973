import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Worker-thread side of a WorkerPool (worker-pool.ts): answers the pool's tasks one at a time with
 * the worker module's handler.
 */
export interface TaskMessage<T> {
  id: number;
  task: T;
}
export type TaskReply<R> = { id: number; ok: true; value: R } | { id: number; ok: false; error: string };
/** Sent once started, with the heap limit in force (a --max-old-space-size of the process overrides the pool's). */
export interface WorkerReady {
  ready: true;
  heapMb: number;
}

/**
 * Answers each task with `handle`'s value, or the message of what it threw. `progress(at)` notes
 * where the task is in shared memory: a worker busy past its time limit cannot answer, so the pool
 * reads it there to say where the task stopped.
 */
export function serveTasks<T, R>(handle: (task: T, progress: (at: number) => void) => R): void {
  const shared = new Int32Array(workerData.progress as SharedArrayBuffer);
  const progress = (at: number) => void Atomics.store(shared, 0, at);
  parentPort!.on('message', ({ id, task }: TaskMessage<T>) => {
    let reply: TaskReply<R>;
    try {
      reply = { id, ok: true, value: handle(task, progress) };
    } catch (err) {
      reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    parentPort!.postMessage(reply);
  });
  parentPort!.postMessage({ ready: true, heapMb: Math.round(getHeapStatistics().heap_size_limit / (1 << 20)) } satisfies WorkerReady);
}
