import { Worker } from 'node:worker_threads';
import { workerEntry } from '../platform/worker-entry';
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

interface Pending {
  batch: RenderBatch;
  timeoutMs: number;
  resolve(results: PoolResult[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  progress: Int32Array;
  ready: boolean;
  current: (Pending & { timer: NodeJS.Timeout }) | null;
}

/**
 * Renders templates in worker threads, so that a template that loops for ever or builds a huge
 * string stops with a render error naming it instead of stalling or exhausting the controller.
 * Every batch gets a time limit; each worker has a heap limit; a worker that hits either is
 * replaced.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly callOutputChars: number;
  private readonly perJobMs: number;
  private readonly memoryMb: number;

  constructor(options: RenderPoolOptions = {}) {
    this.size = options.size ?? 2;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.perJobMs = options.perJobMs ?? 2;
    this.memoryMb = options.memoryMb ?? 256;
    this.callOutputChars = options.callOutputChars ?? RENDER_LIMITS.callOutputChars;
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
    if (this.closed) throw new Error('render pool is closed');
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
    if (this.closed) throw new Error('render pool is closed');
    const batch: RenderBatch = { id: this.nextId++, sources: [source], jobs: [{ source: 0, analyze: true }], maxOutputChars: 0 };
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
    return (await this.submit({ id: this.nextId++, sources, jobs, maxOutputChars })) as RenderResult[];
  }

  private submit(batch: RenderBatch): Promise<PoolResult[]> {
    const timeoutMs = this.timeoutMs + this.perJobMs * batch.jobs.length;
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, timeoutMs, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('render pool is closed'));
    await Promise.all(this.slots.splice(0).map((slot) => this.stop(slot, new Error('render pool is closed'))));
  }

  private dispatch(): void {
    while (this.queue.length) {
      const slot = this.slots.find((s) => s.ready && !s.current);
      if (!slot) {
        // Start another worker when every one is busy; the batch waits for the first free one.
        if (this.slots.length < this.size && this.slots.every((s) => !s.ready || s.current)) {
          if (this.slots.filter((s) => !s.ready).length === 0) this.spawn();
        }
        return;
      }
      const pending = this.queue.shift()!;
      this.run(slot, pending);
    }
  }

  private spawn(): Slot {
    const { boot, entry } = workerEntry(import.meta.url, 'render-worker');
    const shared = new SharedArrayBuffer(4);
    const worker = new Worker(boot, {
      workerData: { entry, progress: shared },
      resourceLimits: { maxOldGenerationSizeMb: this.memoryMb, maxYoungGenerationSizeMb: 32 },
    });
    worker.unref();
    const slot: Slot = { worker, progress: new Int32Array(shared), ready: false, current: null };
    worker.on('message', (message: { ready?: true; id: number; results: WorkerResult[] }) => {
      if (message.ready) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const current = slot.current;
      if (!current || current.batch.id !== message.id) return;
      clearTimeout(current.timer);
      slot.current = null;
      current.resolve(message.results.map((r) => (r.ok ? r : { ok: false, error: new TemplateError(r.detail, r.line, r.column) })));
      this.dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const detail =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `rendering used more than ${this.memoryMb} MB of memory` : `rendering failed: ${err.message}`;
      this.fail(slot, detail);
    });
    worker.on('exit', () => this.fail(slot, 'the render worker stopped'));
    this.slots.push(slot);
    return slot;
  }

  private run(slot: Slot, pending: Pending): void {
    Atomics.store(slot.progress, 0, 0);
    const timer = setTimeout(() => {
      this.fail(slot, `rendering took longer than ${(pending.timeoutMs / 1000).toFixed(1)} s (a loop that does not end?)`);
    }, pending.timeoutMs);
    timer.unref();
    slot.current = { ...pending, timer };
    slot.worker.postMessage(pending.batch);
  }

  /** Ends the slot's batch with an error naming the job in hand and replaces the worker. */
  private fail(slot: Slot, detail: string): void {
    const at = this.slots.indexOf(slot);
    if (at === -1) return;
    this.slots.splice(at, 1);
    if (!slot.ready) {
      // The worker never started: waiting batches would wait for ever.
      void slot.worker.terminate();
      if (!this.slots.some((s) => s.ready))
        for (const pending of this.queue.splice(0)) pending.reject(new Error(`the template renderer could not start: ${detail}`));
      return;
    }
    const current = slot.current;
    slot.current = null;
    if (current) {
      clearTimeout(current.timer);
      current.reject(new RenderAborted(Atomics.load(slot.progress, 0), new TemplateError(detail)));
    }
    void slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }

  private async stop(slot: Slot, reason: Error): Promise<void> {
    if (slot.current) {
      clearTimeout(slot.current.timer);
      slot.current.reject(reason);
      slot.current = null;
    }
    await slot.worker.terminate();
  }
}
