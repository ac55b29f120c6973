import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestController, type TestController } from '../helpers/controller';
import { changedTables, dbFingerprint } from '../helpers/db-fingerprint';
import { casesFor, operationsOf, sampleCases, type FuzzCase, type Operation } from '../helpers/fuzz-cases';
import { eachLimited } from '../helpers/route-spellings';

/** Most hostile requests each operation gets (a seeded sample when it has more). */
const CASES_PER_OPERATION = 24;
const CONCURRENCY = 8;
/** Would end the session the suite runs with. */
const SKIPPED = new Set(['POST /api/auth/logout']);

let c: TestController;
let operations: Operation[];
beforeAll(async () => {
  // Refused sign-ins must not lock the suite out halfway through.
  c = await startTestController({
    settings: { 'security.rate_limit.failed_login_limit': 1000, 'security.rate_limit.requests_per_minute': 100000 },
  });
  const doc = await c.request('GET', '/api/docs/json');
  operations = operationsOf(doc.body).filter((op) => !SKIPPED.has(`${op.method} ${op.path}`));
});
afterAll(async () => c?.close());

async function send(op: Operation, fuzz: FuzzCase): Promise<number> {
  const headers: Record<string, string> = { authorization: `Bearer ${c.adminToken}` };
  if (fuzz.body !== undefined) headers['content-type'] = fuzz.contentType ?? 'application/json';
  const res = await fetch(c.url + fuzz.path + fuzz.query, { method: op.method, headers, body: fuzz.body });
  await res.arrayBuffer();
  return res.status;
}

describe('fuzzing every operation of the OpenAPI document', () => {
  it('no hostile value is a 500 (other 5xx only where documented), and a refused request changes nothing', async () => {
    expect(operations.length).toBeGreaterThan(80);
    const failures: string[] = [];
    let sent = 0;
    let stateChecked = 0;
    for (const [index, op] of operations.entries()) {
      const cases = sampleCases(casesFor(op), CASES_PER_OPERATION, index + 1);
      const before = await dbFingerprint(c.db);
      let accepted = false;
      await eachLimited(cases, CONCURRENCY, async (fuzz) => {
        const status = await send(op, fuzz);
        sent += 1;
        if (status < 400) accepted = true;
        if (status === 500 || (status > 500 && !op.statuses.has(status))) failures.push(`${op.method} ${op.path} [${fuzz.what}] → ${status}`);
      });
      // A request that was let through may change state; with only refusals nothing may change.
      if (!accepted) {
        stateChecked += 1;
        const changed = changedTables(before, await dbFingerprint(c.db));
        if (changed.length) failures.push(`${op.method} ${op.path}: refused requests changed ${changed.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(operations.length * 10);
    // Most operations refuse every hostile request, so their state really was compared.
    expect(stateChecked).toBeGreaterThan(operations.length / 2);
    expect(c.logs()).not.toContain('"level":50');
  }, 180_000);
});
