import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createUser, fromSeed } from '@nats-io/nkeys';

/** The agent's NATS user seed (operator mode); its public half is all the controller ever sees. */
export const NATS_SEED_FILE = 'nats-user.nk';
/** The jobs the agent took, until their deadlines (agent/src/taken-jobs.ts). */
export const TAKEN_JOBS_FILE = 'taken-jobs.log';

/**
 * The state dir holds the agent's private keys: owner only (0700), every file in it 0600. Run at
 * each start, so a dir created before (or loosened by a copy or an archive) is tightened again.
 */
export function secureStateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && (statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600);
  }
}

/** Writes a secret file with mode 0600 from its first byte. */
export function writeSecret(path: string, content: string | Uint8Array): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** The agent's NATS user seed; `fresh` (each enrollment) replaces any earlier one, which belonged to an older identity. */
export function natsSeed(dir: string, fresh = false): { seed: Uint8Array; publicKey: string } {
  const file = join(dir, NATS_SEED_FILE);
  let seed: Uint8Array | null = null;
  if (!fresh) {
    try {
      seed = new TextEncoder().encode(readFileSync(file, 'utf8').trim());
    } catch {
      /* none yet */
    }
  }
  if (!seed) {
    seed = createUser().getSeed();
    writeSecret(file, seed);
  }
  return { seed, publicKey: fromSeed(seed).getPublicKey() };
}
