import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net';
import { seedPgliteDataDir } from '../helpers/pglite';
import { spawnTs, stopAll, type Proc } from '../helpers/processes';

/**
 * The controller as a real process, the way `npm run controller` runs it, on the embedded
 * PostgreSQL (PGlite): no DATABASE_URL. Node runs with the tsx loader directly, not through the
 * tsx CLI: npm's warnings stay out of the output checked below, and SIGTERM reaches our handler
 * itself (the CLI's signal relay gives the child ~30 ms to answer and exits 143 on a busy machine).
 */

const BOOT_TIMEOUT_MS = 240_000;

const dirs: string[] = [];
afterAll(async () => {
  await stopAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-pglite-'));
  dirs.push(dir);
  return dir;
}

/** The controller on a clean machine's environment: none of the runner's database or Switchboard settings. */
function launch(env: Record<string, string>): Proc {
  return spawnTs('controller/src/main.ts', { LOG_LEVEL: 'warn', ...env });
}

/** Waits until the controller answers, or fails with its output if it exits first. */
async function waitUp(proc: Proc, base: string): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`controller exited before answering:\n${proc.output()}`);
    try {
      if ((await fetch(`${base}/api/auth/providers`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`controller did not answer within ${BOOT_TIMEOUT_MS} ms:\n${proc.output()}`);
}

/** SIGTERM and the exit code (SIGKILL, answered -1, only if it hangs for a minute). */
const stop = (proc: Proc) => proc.stop(60_000);

async function login(base: string, username: string, password: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('embedded PostgreSQL (PGlite)', () => {
  it(
    'boots with no DATABASE_URL: login, /me and the API explorer work',
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const proc = launch({
        SWITCHBOARD_DATA_DIR: tempDir(),
        PORT: String(port),
        SWITCHBOARD_ADMIN_USERNAME: 'root',
        SWITCHBOARD_ADMIN_PASSWORD: 'pglite smoke admin password',
      });
      await waitUp(proc, base);

      const session = await login(base, 'root', 'pglite smoke admin password');
      expect(session.status).toBe(200);
      const me = await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${session.body.access_token}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ username: 'root', is_platform_admin: true });

      const doc = (await (await fetch(`${base}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      for (const path of ['/api/auth/login', '/api/auth/refresh', '/api/auth/me', '/api/auth/logout', '/api/auth/sessions', '/api/auth/switch-org']) {
        expect(doc.paths, path).toHaveProperty([path]);
      }
      expect(proc.output()).not.toContain('pglite smoke admin password');
      expect(await stop(proc)).toBe(0);
    },
    BOOT_TIMEOUT_MS + 60_000,
  );

  it(
    'with no admin password, prints a generated one once; it works, and survives a restart',
    async () => {
      // Migrated already (the migrations on a fresh PGlite are the test above's): the password is
      // bootstrap's, which finds no administrator in a migrated database just as in a fresh one.
      const dataDir = tempDir();
      await seedPgliteDataDir(dataDir);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const first = launch({ SWITCHBOARD_DATA_DIR: dataDir, PORT: String(port) });
      await waitUp(first, base);
      const printed = /password: (\S+)/.exec(first.output());
      expect(printed, first.output()).not.toBeNull();
      const password = printed![1];
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect((await login(base, 'admin', password)).status).toBe(200);
      expect(await stop(first)).toBe(0);

      // Second start on the same data: nothing printed, the account and its password are kept,
      // and SWITCHBOARD_ADMIN_PASSWORD (first start only) changes nothing.
      const second = launch({ SWITCHBOARD_DATA_DIR: dataDir, PORT: String(port), SWITCHBOARD_ADMIN_PASSWORD: 'too late for this one' });
      await waitUp(second, base);
      expect(second.output()).not.toMatch(/password:/);
      expect((await login(base, 'admin', password)).status).toBe(200);
      expect((await login(base, 'admin', 'too late for this one')).status).toBe(401);
      expect(await stop(second)).toBe(0);
    },
    2 * BOOT_TIMEOUT_MS + 60_000,
  );
});

// Every setting's checks are in config.test.ts; these two show what the process does with them.
describe.concurrent('bad settings stop the process with one line naming the setting', () => {
  async function failure(env: Record<string, string>): Promise<string> {
    const proc = launch({ SWITCHBOARD_DATA_DIR: tempDir(), ...env });
    expect(await proc.exited).not.toBe(0);
    const lines = proc
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines, proc.output()).toHaveLength(1);
    return lines[0];
  }

  it('PORT=abc', async () => {
    expect(await failure({ PORT: 'abc' })).toBe('switchboard: PORT must be a whole number from 0 to 65535, got "abc"');
  }, 60_000);

  it('an unreachable DATABASE_URL', async () => {
    const port = await freePort();
    expect(await failure({ DATABASE_URL: `postgres://nobody@127.0.0.1:${port}/nothing` })).toMatch(
      /^switchboard: DATABASE_URL: cannot use the database: .*ECONNREFUSED/,
    );
  }, 60_000);
});
