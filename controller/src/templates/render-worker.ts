import { serveTasks } from '../platform/worker-tasks';
import { TemplateError, analyzeTemplate, renderTemplate, type RenderFormat } from './engine';
import type { TemplateVariable } from './variables';

/**
 * Worker-thread side of the render pool: renders batches with the sandboxed engine and reports
 * the index of the job in hand as the task's progress, so that the pool can name the job when it
 * has to stop a render that ran past its time or memory limit.
 */
export interface RenderBatch {
  sources: string[];
  /** Characters of output the batch's renders may add up to; those past it fail. */
  maxOutputChars: number;
  /** A render of a source with variables, or (`analyze`) its syntax check and variables. */
  jobs: ({ source: number; variables: Record<string, unknown>; format?: RenderFormat } | { source: number; analyze: true })[];
}
export type WorkerResult =
  | { ok: true; output: string }
  | { ok: true; variables: TemplateVariable[] }
  | { ok: false; detail: string; line: number | null; column: number | null };

const callTooLarge = (max: number) => `the renders of this call add up to more than ${max} characters of output; render fewer devices at once`;

const failure = (error: TemplateError): WorkerResult => ({ ok: false, detail: error.detail, line: error.line, column: error.column });

function runJob(batch: RenderBatch, job: RenderBatch['jobs'][number]): WorkerResult {
  const source = batch.sources[job.source];
  if ('analyze' in job) {
    const { variables, error } = analyzeTemplate(source);
    return error ? failure(error) : { ok: true, variables };
  }
  return { ok: true, output: renderTemplate(source, job.variables, job.format) };
}

serveTasks((batch: RenderBatch, progress): WorkerResult[] => {
  let output = 0;
  const tooLarge = failure(new TemplateError(callTooLarge(batch.maxOutputChars)));
  return batch.jobs.map((job, index) => {
    progress(index);
    if (output > batch.maxOutputChars) return tooLarge;
    try {
      const result = runJob(batch, job);
      if ('output' in result) output += result.output.length;
      return output > batch.maxOutputChars ? tooLarge : result;
    } catch (err) {
      return failure(err instanceof TemplateError ? err : new TemplateError(err instanceof Error ? err.message : String(err)));
    }
  });
});
