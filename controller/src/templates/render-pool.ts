import { workerEntry } from '../platform/worker-entry';
import { WorkerPool, type TaskFailure } from '../platform/worker-pool';
import { RENDER_LIMITS, TemplateError, type RenderFormat } from './engine';
import type { RenderBatch, WorkerResult } from './render-worker';
import type { TemplateVariable } from './variables';

export interface RenderRequest {
  source: string;
  variables: Record<string, unknown>;
  /** The template's config_format, which decides how its {{ }} values are written (output-rules.ts). */
  format?: RenderFormat;
}
export type RenderResult = { ok: true; output: string } | { ok: false; error: TemplateError };
/** A source's syntax check: its variables, or its syntax error (variables then empty). */
export interface TemplateAnalysis {
  variables: TemplateVariable[];
  error: TemplateError | null;
}

/** A batch stopped at one job (time or memory limit); the other jobs' results are lost. */
export class RenderAborted extends Error {
  override name = 'RenderAborted';
  constructor(
    readonly index: number,
    readonly error: TemplateError,
  ) {
    super(error.message);
  }
}

export interface RenderPoolOptions {
  /** Worker threads (default 2), started on first use. */
  size?: number;
  /** Time a batch may take: base plus a share per job. */
  timeoutMs?: number;
  perJobMs?: number;
  /** Heap limit of each worker. */
  memoryMb?: number;
  /** Characters of output one renderMany call may add up to (RENDER_LIMITS.callOutputChars). */
  callOutputChars?: number;
}

/** Calls of at least this many renders are split across the workers (below, a worker's round trip costs more than it saves). */
const SPLIT_FROM = 64;

type PoolResult = RenderResult | { ok: true; variables: TemplateVariable[] };

/**
 * Renders templates in worker threads, so that a template that loops for ever or builds a huge
 * string stops with a render error naming it instead of stalling or exhausting the controller.
 * Every batch gets a time limit; each worker has a heap limit; a worker that hits either is
 * replaced.
 */
export class RenderPool {
  private readonly workers: WorkerPool<RenderBatch, WorkerResult[]>;
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly callOutputChars: number;
  private readonly perJobMs: number;

  constructor(options: RenderPoolOptions = {}) {
    this.size = options.size ?? 2;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.perJobMs = options.perJobMs ?? 2;
    const memoryMb = options.memoryMb ?? 256;
    this.callOutputChars = options.callOutputChars ?? RENDER_LIMITS.callOutputChars;
    const detail = (failure: TaskFailure) => stopped(failure, memoryMb);
    this.workers = new WorkerPool({
      worker: workerEntry(import.meta.url, 'render-worker'),
      size: this.size,
      timeoutMs: this.timeoutMs,
      memoryMb,
      youngGenerationMb: 32,
      // Most calls are one render or a syntax check: a second worker starts when one is busy.
      startAll: false,
      closedMessage: 'render pool is closed',
      failed: (_batch, failure, job) => new RenderAborted(job, new TemplateError(detail(failure))),
      notStarted: (failure) => new Error(`the template renderer could not start: ${detail(failure)}`),
    });
  }

  /** Renders one template; throws TemplateError. */
  async render(source: string, variables: Record<string, unknown>, format?: RenderFormat): Promise<string> {
    const [result] = await this.renderMany([{ source, variables, format }]).catch((err: unknown) => {
      if (err instanceof RenderAborted) throw err.error;
      throw err;
    });
    if (!result.ok) throw result.error;
    return result.output;
  }

  /**
   * Renders many; one result per request, in order. Throws RenderAborted when a limit stops it.
   * A large call is split into one batch per worker, so that a deployment's renders use every
   * worker (the pool's size is the machine's render parallelism) instead of queueing on one.
   */
  async renderMany(requests: RenderRequest[]): Promise<RenderResult[]> {
    if (requests.length === 0) return [];
    const parts = requests.length >= SPLIT_FROM ? this.size : 1;
    const share = Math.ceil(requests.length / parts);
    const chunks = Array.from({ length: Math.ceil(requests.length / share) }, (_, i) => i * share);
    // The call's output allowance, shared by its parts.
    const maxOutputChars = Math.floor(this.callOutputChars / chunks.length);
    const results = await Promise.all(
      chunks.map((offset) =>
        this.renderBatch(requests.slice(offset, offset + share), maxOutputChars).catch((err: unknown) => {
          // The index of the request in the call, not in its chunk.
          if (err instanceof RenderAborted) throw new RenderAborted(offset + err.index, err.error);
          throw err;
        }),
      ),
    );
    return results.flat();
  }

  /**
   * A source's syntax check and variables, in a worker like a render: parsing a large source
   * takes a second or more, which the controller's event loop must not spend (every request
   * would wait). A check stopped by a limit answers as a syntax error.
   */
  async analyze(source: string): Promise<TemplateAnalysis> {
    const batch: RenderBatch = { sources: [source], jobs: [{ source: 0, analyze: true }], maxOutputChars: 0 };
    const [result] = await this.submit(batch).catch((err: unknown) => {
      if (err instanceof RenderAborted) return [{ ok: false as const, error: err.error }];
      throw err;
    });
    if (!result.ok) return { variables: [], error: result.error };
    return { variables: 'variables' in result ? result.variables : [], error: null };
  }

  /** One batch for one worker: each distinct source sent once. */
  private async renderBatch(requests: RenderRequest[], maxOutputChars: number): Promise<RenderResult[]> {
    const sources: string[] = [];
    const index = new Map<string, number>();
    const jobs = requests.map((r) => {
      let i = index.get(r.source);
      if (i === undefined) {
        i = sources.push(r.source) - 1;
        index.set(r.source, i);
      }
      return { source: i, variables: r.variables, format: r.format };
    });
    return (await this.submit({ sources, jobs, maxOutputChars })) as RenderResult[];
  }

  /** A batch in a worker, its time limit a base plus a share per job. */
  private async submit(batch: RenderBatch): Promise<PoolResult[]> {
    const results = await this.workers.run(batch, this.timeoutMs + this.perJobMs * batch.jobs.length);
    return results.map((r) => (r.ok ? r : { ok: false, error: new TemplateError(r.detail, r.line, r.column) }));
  }

  close(): Promise<void> {
    return this.workers.close();
  }
}

/** What stopped a batch, as its render error says it. */
function stopped(failure: TaskFailure, memoryMb: number): string {
  switch (failure.kind) {
    case 'timeout':
      return `rendering took longer than ${(failure.ms / 1000).toFixed(1)} s (a loop that does not end?)`;
    case 'memory':
      // The limit the pool set, as docs/security.md states it (not the worker's whole heap).
      return `rendering used more than ${memoryMb} MB of memory`;
    case 'error':
      return `rendering failed: ${failure.message}`;
    case 'exited':
      return 'the render worker stopped';
  }
}
