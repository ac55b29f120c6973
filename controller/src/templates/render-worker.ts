import { parentPort, workerData } from 'node:worker_threads';
import { TemplateError, renderTemplate } from './engine';

/**
 * Worker-thread side of the render pool: renders batches with the sandboxed engine and reports
 * the index of the job in hand through shared memory, so that the pool can name the job when it
 * has to stop a render that ran past its time or memory limit.
 */
export interface RenderBatch {
  id: number;
  sources: string[];
  jobs: { source: number; variables: Record<string, unknown> }[];
}
export type WorkerResult = { ok: true; output: string } | { ok: false; detail: string; line: number | null; column: number | null };

const progress = new Int32Array(workerData.progress as SharedArrayBuffer);

parentPort!.on('message', (batch: RenderBatch) => {
  const results: WorkerResult[] = batch.jobs.map((job, index) => {
    Atomics.store(progress, 0, index);
    try {
      return { ok: true, output: renderTemplate(batch.sources[job.source], job.variables) };
    } catch (err) {
      const error = err instanceof TemplateError ? err : new TemplateError(err instanceof Error ? err.message : String(err));
      return { ok: false, detail: error.detail, line: error.line, column: error.column };
    }
  });
  parentPort!.postMessage({ id: batch.id, results });
});
parentPort!.postMessage({ ready: true });
