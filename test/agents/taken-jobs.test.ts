/**
 * The jobs an agent took, kept in a file of its state dir across restarts (agent/src/taken-jobs.ts):
 * a copy of a batch sent after a restart is refused like one sent before it. Real files.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TAKEN_JOBS_FILE } from '../../agent/src/state-dir';
import { TakenJobs } from '../../agent/src/taken-jobs';

const HOUR = 3_600_000;
const job = (id: string, attempt: number, deadlineMs: number) => ({ job_id: id, attempt, deadline_at: new Date(deadlineMs).toISOString() });
const fileIn = () => join(mkdtempSync(join(tmpdir(), 'sb-taken-')), TAKEN_JOBS_FILE);

describe('the jobs an agent took', () => {
  it('are refused again at the same or an earlier attempt, and taken at a later one', () => {
    const taken = new TakenJobs();
    const later = Date.now() + HOUR;
    expect(taken.takeAll([job('a', 1, later), job('b', 1, later)])).toEqual([]);
    expect(taken.takeAll([job('a', 1, later), job('b', 2, later), job('c', 1, later)])).toEqual([job('a', 1, later)]);
    expect(taken.take(job('b', 1, later))).toBe(false);
  });

  it('outlive the process in its file, which only its owner can read', () => {
    const file = fileIn();
    const later = Date.now() + HOUR;
    new TakenJobs({ file }).takeAll([job('a', 3, later), job('b', 1, later)]);
    const restarted = new TakenJobs({ file });
    expect(restarted.takeAll([job('a', 3, later), job('a', 2, later), job('b', 2, later)])).toEqual([job('a', 3, later), job('a', 2, later)]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Taken after the restart too: the next start knows b at attempt 2.
    expect(new TakenJobs({ file }).take(job('b', 2, later))).toBe(false);
  });

  it('are forgotten past their deadlines, and the file keeps only the others; a line cut short is skipped', () => {
    const file = fileIn();
    const later = Date.now() + HOUR;
    writeFileSync(file, `old 1 ${Date.now() - 1_000}\nkept 2 ${later}\ncut 1`);
    const restarted = new TakenJobs({ file });
    expect(readFileSync(file, 'utf8')).toBe(`kept 2 ${later}\n`);
    expect(restarted.take(job('old', 1, later))).toBe(true);
    expect(restarted.take(job('cut', 1, later))).toBe(true);
    expect(restarted.take(job('kept', 2, later))).toBe(false);
  });

  it('are rewritten into a short file once most of its lines are jobs past their deadlines', () => {
    const file = fileIn();
    const taken = new TakenJobs({ file });
    const now = Date.now();
    // 3,000 jobs whose deadline passes, then the prune after the next thousand drops them from the file.
    for (let i = 0; i < 3_000; i++) taken.take(job(`gone-${i}`, 1, now + 1_000), now);
    for (let i = 0; i < 1_000; i++) taken.take(job(`live-${i}`, 1, now + HOUR), now + 2_000);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThan(2_000);
    expect(lines.every((l) => l.startsWith('live-'))).toBe(true);
  });

  it('keep every job of a batch whose taking rewrote the file midway', () => {
    const file = fileIn();
    const taken = new TakenJobs({ file });
    const now = Date.now();
    for (let i = 0; i < 990; i++) taken.take(job(`gone-${i}`, 1, now + 1_000), now);
    // The 1,000th job taken, the tenth of this batch, prunes the 990 and rewrites the file.
    const batch = Array.from({ length: 50 }, (_, i) => job(`batch-${i}`, 1, now + HOUR));
    expect(taken.takeAll(batch, now + 2_000)).toEqual([]);
    expect(new TakenJobs({ file }).takeAll(batch)).toEqual(batch);
  });
});
