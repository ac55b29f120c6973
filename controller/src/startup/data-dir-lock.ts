/**
 * One controller process per data directory. Two on one directory would each open the embedded
 * database, run their own built-in agents with one identity and disagree about everything, so
 * the second refuses to start, naming the directory and the process that holds it. The lock is
 * a file with the holder's pid; a lock whose process is gone (killed, crashed) is taken over.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config';

export const LOCK_FILE = 'switchboard.lock';

interface LockContent {
  pid: number;
  host: string;
  started_at: string;
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

function readLock(path: string): LockContent | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    return Number.isInteger(parsed.pid) ? (parsed as LockContent) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the lock's process still runs (EPERM: it runs as another user). A lock from another host
 * (a shared file system) cannot be checked from here, so it holds.
 */
function heldByAnother(lock: LockContent): boolean {
  if (lock.host !== hostname()) return true;
  if (lock.pid === process.pid) return false;
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryCreate(path: string, content: LockContent): boolean {
  try {
    writeFileSync(path, JSON.stringify(content) + '\n', { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Takes the data directory's lock or throws a ConfigError naming the directory and the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new ConfigError(`SWITCHBOARD_DATA_DIR: cannot create ${dataDir}: ${(err as Error).message}`);
  }
  const path = join(dataDir, LOCK_FILE);
  const mine: LockContent = { pid: process.pid, host: hostname(), started_at: new Date().toISOString() };
  // Two attempts: a stale lock is removed once; losing that race to another starter is a refusal.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(path, mine)) return held(path);
    const holder = readLock(path);
    if (holder && heldByAnother(holder)) {
      throw new ConfigError(
        `SWITCHBOARD_DATA_DIR: ${dataDir} is in use by another Switchboard process (pid ${holder.pid} on ${holder.host}, ` +
          `started ${holder.started_at}); stop that process, or give this one its own SWITCHBOARD_DATA_DIR ` +
          `(if that process is gone, delete ${path})`,
      );
    }
    unlinkQuietly(path);
  }
  throw new ConfigError(`SWITCHBOARD_DATA_DIR: ${dataDir} was locked by another process starting at the same time; start one at a time`);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

function held(path: string): DataDirLock {
  const release = () => {
    if (readLock(path)?.pid === process.pid) unlinkQuietly(path);
    process.off('exit', release);
  };
  // process.exit() skips the clean stop; the lock still goes (a SIGKILL leaves it, to be taken over).
  process.on('exit', release);
  return { path, release };
}
