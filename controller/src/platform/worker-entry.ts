/** A worker module, started through the one boot script (worker-boot.mjs). */
export interface WorkerModule {
  boot: URL;
  entry: string;
}

/**
 * How a pool starts its worker module `name` (beside the pool's own module, `here`): through the
 * one boot script, which loads TypeScript through tsx when the controller runs from source.
 */
export function workerEntry(here: string, name: string): WorkerModule {
  return { boot: new URL('./worker-boot.mjs', import.meta.url), entry: new URL(`./${name}.${here.endsWith('.ts') ? 'ts' : 'js'}`, here).href };
}
