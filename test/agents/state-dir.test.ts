/** The agent's state dir holds its private keys: owner-only, tightened again at every start, git-ignored. */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NATS_SEED_FILE, natsSeed, secureStateDir } from '../../agent/src/state-dir';
import { saveIdentity, IDENTITY_FILE, type AgentIdentity } from '../../agent/src/identity';
import { ROOT } from '../helpers/processes';

const base = mkdtempSync(join(tmpdir(), 'sb-state-'));
const mode = (path: string) => statSync(path).mode & 0o777;

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('agent state dir', () => {
  it('is created 0700 with its NATS seed 0600', () => {
    const dir = join(base, 'fresh', 'state');
    secureStateDir(dir);
    const { publicKey } = natsSeed(dir);
    expect(publicKey).toMatch(/^U[A-Z2-7]{55}$/);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, NATS_SEED_FILE))).toBe(0o600);
    // The same seed on the next start; a new one at a new enrollment.
    expect(natsSeed(dir).publicKey).toBe(publicKey);
    const enrolled = natsSeed(dir, true).publicKey;
    expect(enrolled).not.toBe(publicKey);
    expect(natsSeed(dir).publicKey).toBe(enrolled);
    expect(mode(join(dir, NATS_SEED_FILE))).toBe(0o600);
  });

  it('tightens a dir and key files left readable by others', () => {
    const dir = join(base, 'loose');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    for (const f of [IDENTITY_FILE, NATS_SEED_FILE]) {
      writeFileSync(join(dir, f), 'x', { mode: 0o644 });
      chmodSync(join(dir, f), 0o644);
    }
    secureStateDir(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, IDENTITY_FILE))).toBe(0o600);
    expect(mode(join(dir, NATS_SEED_FILE))).toBe(0o600);
  });

  it('saves the identity 0600', () => {
    const dir = join(base, 'saved');
    saveIdentity(dir, { agent_id: 'a', nats: {} } as unknown as AgentIdentity);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, IDENTITY_FILE))).toBe(0o600);
  });

  it('the default state dir is git-ignored', () => {
    // SWITCHBOARD_AGENT_STATE_DIR defaults to ./agent-state.
    const check = spawnSync('git', ['check-ignore', 'agent-state/identity.json', `agent-state/${NATS_SEED_FILE}`], { cwd: ROOT, encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.stdout.trim().split('\n')).toEqual(['agent-state/identity.json', `agent-state/${NATS_SEED_FILE}`]);
  });
});
