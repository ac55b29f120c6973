/**
 * `npm run bench -- signatures [--iterations 2000] [--rounds 10] [--config-kb 20]`: CPU µs per sign and per verify of
 * the job protocol's signatures (shared/src/jobs/crypto.ts) next to the same JWS made with jose's
 * WebCrypto path, for the messages that travel: a controller job message (EdDSA, compact), an agent
 * result carrying a config (ES256, detached unencoded payload) and a heartbeat (ES256, compact).
 */
import { CompactSign, FlattenedSign, compactVerify, flattenedVerify, importJWK } from 'jose';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  controllerKeyFromSecret,
  generateAgentKeys,
  importAgentPrivateKey,
  importAgentPublicKey,
  signJson,
  signJsonDetached,
  verifyJson,
} from '../../shared/src/jobs/crypto';
import { option } from './controller';

const encoder = new TextEncoder();

/**
 * CPU µs per call, the best of `rounds` rounds: the machine is shared, and CPU time taken in
 * short rounds, keeping the least disturbed one, is what compares across runs.
 */
async function timed(iterations: number, rounds: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, iterations); i++) await fn(); // warm-up
  const per = Math.max(1, Math.floor(iterations / rounds));
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < per; i++) await fn();
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / per);
  }
  return best;
}

export async function run(args: string[]): Promise<void> {
  const iterations = option(args, 'iterations', 2000);
  const rounds = option(args, 'rounds', 10);
  const configKb = option(args, 'config-kb', 20);
  const agent = await generateAgentKeys();
  const { sign } = await importAgentPrivateKey(agent.privateJwk);
  const verify = await importAgentPublicKey(agent.publicJwk);
  const joseSign = await importJWK(agent.privateJwk, AGENT_SIGN_ALG);
  const joseVerify = await importJWK(agent.publicJwk, AGENT_SIGN_ALG);
  const controller = controllerKeyFromSecret(Buffer.alloc(32, 7));

  const config = 'interface GigabitEthernet0/1\n description uplink\n'.repeat(Math.ceil((configKb * 1024) / 48));
  const result = {
    v: 1,
    type: 'result',
    job_id: 'j',
    attempt: 1,
    agent_id: 'a',
    status: 'succeeded',
    result: { results: [{ method: 'cli', config: { text: config, format: 'cli', via: 'ssh' } }] },
  };
  const job = {
    v: 1,
    job_id: 'j',
    attempt: 1,
    kind: 'backup',
    device: { id: 'd', host: '10.0.0.1', ports: { ssh: 22 } },
    secrets: { ciphertext: 'x'.repeat(600) },
  };
  const beat = { v: 1, type: 'heartbeat', agent_id: 'a', at: new Date().toISOString(), active_jobs: 3 };

  const rows: string[][] = [];
  const measure = async (what: string, signOnce: () => Promise<string>, verifyOnce: (token: string) => Promise<unknown>) => {
    const token = await signOnce();
    const s = await timed(iterations, rounds, signOnce);
    const v = await timed(iterations, rounds, () => verifyOnce(token));
    rows.push([what, s.toFixed(1), v.toFixed(1), (s + v).toFixed(1)]);
  };

  await measure(
    'job message, EdDSA compact: crypto.ts',
    () => signJson(job, controller.privateKey, CONTROLLER_SIGN_ALG),
    (t) => verifyJson(t, controller.publicKey, CONTROLLER_SIGN_ALG),
  );
  await measure(
    'job message, EdDSA compact: jose',
    () => new CompactSign(encoder.encode(JSON.stringify(job))).setProtectedHeader({ alg: CONTROLLER_SIGN_ALG }).sign(controller.privateKey),
    async (t) => JSON.parse(new TextDecoder().decode((await compactVerify(t, controller.publicKey, { algorithms: [CONTROLLER_SIGN_ALG] })).payload)),
  );
  await measure(
    `result with ${configKb} KB config, ES256 detached: crypto.ts`,
    () => signJsonDetached(result, sign, AGENT_SIGN_ALG, 'a'),
    (t) => verifyJson(t, verify, AGENT_SIGN_ALG),
  );
  await measure(
    `result with ${configKb} KB config, ES256 detached: jose`,
    async () => {
      const json = JSON.stringify(result);
      const jws = await new FlattenedSign(encoder.encode(json))
        .setProtectedHeader({ alg: AGENT_SIGN_ALG, kid: 'a', b64: false, crit: ['b64'] })
        .sign(joseSign);
      return `${jws.protected}..${jws.signature}\n${json}`;
    },
    async (t) => {
      const nl = t.indexOf('\n');
      const [protectedHeader, , signature] = t.slice(0, nl).split('.');
      await flattenedVerify({ protected: protectedHeader, signature, payload: encoder.encode(t.slice(nl + 1)) }, joseVerify, {
        algorithms: [AGENT_SIGN_ALG],
      });
      return JSON.parse(t.slice(nl + 1));
    },
  );
  await measure(
    'heartbeat, ES256 compact: crypto.ts',
    () => signJson(beat, sign, AGENT_SIGN_ALG, 'a'),
    (t) => verifyJson(t, verify, AGENT_SIGN_ALG),
  );
  await measure(
    'heartbeat, ES256 compact: jose',
    () => new CompactSign(encoder.encode(JSON.stringify(beat))).setProtectedHeader({ alg: AGENT_SIGN_ALG, kid: 'a' }).sign(joseSign),
    async (t) => JSON.parse(new TextDecoder().decode((await compactVerify(t, joseVerify, { algorithms: [AGENT_SIGN_ALG] })).payload)),
  );

  console.log(
    `signatures: ${iterations} iterations each, CPU µs per message (best of ${rounds} rounds) (load average ` +
      `${(await import('node:os')).loadavg()[0].toFixed(2)})`,
  );
  const header = ['message', 'sign µs', 'verify µs', 'sign+verify µs'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}
