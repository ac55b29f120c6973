import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { HEAP_BYTES_PER_BODY_BYTE, HEAP_BYTES_PER_VALUE, LARGE_BODY_HEAP_SHARE } from './body-limits';

/**
 * The JSON values of a body, counted on its raw bytes before it is decoded or parsed: every `{`,
 * `[` and `,` outside strings (each non-empty array or object has one per item, an empty one
 * counts itself). One tight pass, no allocation; stops once the count passes `stopAbove`.
 * Structural bytes are ASCII and never occur inside a UTF-8 sequence; malformed JSON gets a count
 * all the same and is refused by the parser afterwards.
 */
export function countJsonValues(bytes: Uint8Array, stopAbove = Infinity): number {
  let count = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === 0x22) {
      // A string: skip to its closing quote, stepping over escapes (\" and \\).
      for (i++; i < n; i++) {
        const c = bytes[i];
        if (c === 0x22) break;
        if (c === 0x5c) i++;
      }
    } else if (b === 0x2c || b === 0x7b || b === 0x5b) {
      if (++count > stopAbove) return count;
    }
  }
  return count;
}

/** Upper bound of the heap a large body takes while its request runs (body-limits.ts). */
export function bodyHeapEstimate(bytes: number, values: number): number {
  return bytes * HEAP_BYTES_PER_BODY_BYTE + values * HEAP_BYTES_PER_VALUE;
}

/**
 * Heap reservations, first come first served: a request waits until its share fits beside those
 * already granted. A share larger than the whole budget is cut to the budget, so it runs alone
 * rather than never. The one waiting at the head blocks those behind it, so none starves.
 */
export class HeapBudget {
  private used = 0;
  private readonly queue: { need: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Resolves, once granted, with the function that gives the share back (safe to call twice). */
  reserve(bytes: number): Promise<() => void> {
    const need = Math.min(Math.max(bytes, 0), this.capacity);
    return new Promise((resolve) => {
      const grant = () => {
        this.used += need;
        let held = true;
        resolve(() => {
          if (!held) return;
          held = false;
          this.used -= need;
          this.drain();
        });
      };
      if (this.queue.length === 0 && this.used + need <= this.capacity) grant();
      else this.queue.push({ need, grant });
    });
  }

  /** Bytes granted and not yet given back. */
  get reserved(): number {
    return this.used;
  }

  /** Requests waiting for their share. */
  get waiting(): number {
    return this.queue.length;
  }

  private drain(): void {
    while (this.queue.length > 0 && this.used + this.queue[0].need <= this.capacity) this.queue.shift()!.grant();
  }
}

/** One budget per process, as there is one heap: every app of the process shares it. */
export const largeBodyBudget = new HeapBudget(Math.floor(getHeapStatistics().heap_size_limit * LARGE_BODY_HEAP_SHARE));

const releases = new WeakMap<FastifyRequest, () => void>();

/**
 * Waits until the body's estimated heap fits in the budget, from a content-type parser, after
 * the body has arrived (as a Buffer, outside the V8 heap) and before it is decoded: a slow upload
 * holds no share. The share is given back when the answer is ready (largeBodyHooks).
 */
export async function admitLargeBody(request: FastifyRequest, estimate: number): Promise<void> {
  releases.set(request, await largeBodyBudget.reserve(estimate));
}

/**
 * Gives a large body's share back once its answer exists (onSend runs for every answer, errors
 * included, even when the client has gone). The parsed body is dropped there too: nothing reads it
 * after the handler, and a client slow to read the answer would otherwise keep it alive.
 */
export function largeBodyHooks(app: FastifyInstance): void {
  app.addHook('onSend', (request, _reply, payload, done) => {
    const release = releases.get(request);
    if (release) {
      releases.delete(request);
      request.body = undefined;
      release();
    }
    done(null, payload);
  });
}
