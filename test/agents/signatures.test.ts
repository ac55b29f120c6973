/**
 * The signature forms of the job protocol (shared/src/jobs/crypto.ts) with real keys: agents'
 * events in the detached form (RFC 7797, payload unencoded after a line break), everything else
 * (job batches, replies, heartbeats) in the compact form. Events are accepted detached only.
 */
import { CompactSign, FlattenedSign, compactVerify, decodeProtectedHeader, flattenedVerify, importJWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_SIGN_ALG,
  CONTROLLER_SIGN_ALG,
  controllerKeyFromSecret,
  generateAgentKeys,
  importAgentPrivateKey,
  importAgentPublicKey,
  signJson,
  signJsonDetached,
  signerOf,
  unverifiedPayload,
  verifyJson,
  type AnyKey,
} from '../../shared/src/jobs/crypto';
import { PROTOCOL_VERSION } from '../../shared/src/jobs/messages';

const AGENT_ID = '0b6a2f4e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
const config = Array.from(
  { length: 400 },
  (_, i) => `interface Gi0/${i}\n description "uplink to core.${i}" é ✓ 😀\n ip address 10.0.${i % 250}.1 255.255.255.0`,
).join('\n');
/** A backup result of about 30 KB: config text, transcript (quotes, dots, line breaks, non-ASCII). */
const result = {
  v: PROTOCOL_VERSION,
  job_id: 'a1b2c3d4-0000-4000-8000-000000000001',
  attempt: 1,
  agent_id: AGENT_ID,
  type: 'result',
  status: 'succeeded',
  error: null,
  result: { results: [{ method: 'cli', config: { text: config, format: 'cli', via: 'ssh' } }], transcript: `> show running-config\n${config}\n` },
  started_at: '2026-01-01T00:00:00.000Z',
  finished_at: '2026-01-01T00:00:01.000Z',
  logs: [{ at: '2026-01-01T00:00:00.500Z', level: 'info', text: 'connecting' }],
};

let sign: AnyKey;
let verify: AnyKey;
let otherVerify: AnyKey;

beforeAll(async () => {
  const keys = await generateAgentKeys();
  sign = (await importAgentPrivateKey(keys.privateJwk)).sign;
  verify = await importAgentPublicKey(keys.publicJwk);
  otherVerify = await importAgentPublicKey((await generateAgentKeys()).publicJwk);
});

/** Replaces the protected header of a detached token, keeping its signature and payload. */
function withHeader(token: string, header: Record<string, unknown>): string {
  return `${Buffer.from(JSON.stringify(header)).toString('base64url')}${token.slice(token.indexOf('.'))}`;
}

describe('detached event signatures (RFC 7797)', () => {
  it('round-trips a 30 KB result without base64url: header..signature, a line break, the JSON as is', async () => {
    const token = await signJsonDetached(result, sign, AGENT_SIGN_ALG, AGENT_ID);
    const nl = token.indexOf('\n');
    expect(token.slice(0, nl)).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    expect(token.slice(nl + 1)).toBe(JSON.stringify(result));
    expect(decodeProtectedHeader({ protected: token.slice(0, token.indexOf('.')) })).toEqual({
      alg: 'ES256',
      kid: AGENT_ID,
      b64: false,
      crit: ['b64'],
    });
    expect(await verifyJson(token, verify, AGENT_SIGN_ALG)).toEqual(result);
    expect(signerOf(token)).toBe(AGENT_ID);
    expect(unverifiedPayload(token)).toEqual(result);
  });

  it('keeps line breaks, lone surrogates and a payload without dots intact', async () => {
    const odd = { text: 'a\nb\r\n"c"\\d', lone: 'x\ud800y', nodots: true };
    const token = await signJsonDetached(odd, sign, AGENT_SIGN_ALG, AGENT_ID);
    expect(await verifyJson(token, verify, AGENT_SIGN_ALG)).toEqual(odd);
    const plain = await signJsonDetached({ n: 1 }, sign, AGENT_SIGN_ALG, AGENT_ID);
    expect(await verifyJson(plain, verify, AGENT_SIGN_ALG)).toEqual({ n: 1 });
  });

  it('is what other RFC 7797 implementations make: jose signs the same input', async () => {
    const json = JSON.stringify(result);
    const jws = await new FlattenedSign(new TextEncoder().encode(json))
      .setProtectedHeader({ alg: 'ES256', kid: AGENT_ID, b64: false, crit: ['b64'] })
      .sign(sign as never);
    expect(await verifyJson(`${jws.protected}..${jws.signature}\n${json}`, verify, AGENT_SIGN_ALG)).toEqual(result);
  });

  it('refuses a tampered body, header or signature, another key and another algorithm', async () => {
    const token = await signJsonDetached(result, sign, AGENT_SIGN_ALG, AGENT_ID);
    const nl = token.indexOf('\n');
    const tamperedBody = token.slice(0, nl + 1) + token.slice(nl + 1).replace('"succeeded"', '"failed"');
    await expect(verifyJson(tamperedBody, verify, AGENT_SIGN_ALG)).rejects.toThrow(/signature verification failed/);
    const extraByte = `${token} `;
    await expect(verifyJson(extraByte, verify, AGENT_SIGN_ALG)).rejects.toThrow(/signature verification failed/);
    const otherKid = withHeader(token, { alg: 'ES256', kid: '11111111-2222-4333-8444-555555555555', b64: false, crit: ['b64'] });
    expect(signerOf(otherKid)).toBe('11111111-2222-4333-8444-555555555555');
    await expect(verifyJson(otherKid, verify, AGENT_SIGN_ALG)).rejects.toThrow(/signature verification failed/);
    // Without b64: false the payload would be base64url: refused, not read another way.
    await expect(verifyJson(withHeader(token, { alg: 'ES256', kid: AGENT_ID }), verify, AGENT_SIGN_ALG)).rejects.toThrow();
    await expect(verifyJson(withHeader(token, { alg: 'ES256', kid: AGENT_ID, b64: false }), verify, AGENT_SIGN_ALG)).rejects.toThrow(); // b64 without crit
    const sig = token.slice(token.indexOf('..') + 2, nl);
    const flipped = token.slice(0, token.indexOf('..') + 2) + (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1) + token.slice(nl);
    await expect(verifyJson(flipped, verify, AGENT_SIGN_ALG)).rejects.toThrow();
    await expect(verifyJson(token, otherVerify, AGENT_SIGN_ALG)).rejects.toThrow(/signature verification failed/);
    await expect(verifyJson(token, verify, CONTROLLER_SIGN_ALG)).rejects.toThrow(/alg/);
  });

  it('refuses malformed detached tokens', async () => {
    const token = await signJsonDetached(result, sign, AGENT_SIGN_ALG, AGENT_ID);
    const nl = token.indexOf('\n');
    const dots = token.indexOf('..');
    for (const bad of [
      token.slice(nl), // no header line
      `${token.slice(0, dots)}.x.${token.slice(dots + 2)}`, // a payload between the dots
      `${token.slice(0, dots)}${token.slice(dots + 1)}`, // one dot
      `\n${token}`,
    ]) {
      await expect(verifyJson(bad, verify, AGENT_SIGN_ALG)).rejects.toThrow();
    }
    expect(signerOf('no dots at all')).toBeNull();
    expect(signerOf('!!!.x.y')).toBeNull();
    expect(() => unverifiedPayload('{"job_id":"x"}')).toThrow();
  });
});

describe('compact signatures (controller messages, heartbeats)', () => {
  it('verify, name their signer and give their payload unverified; refused where only the detached form is taken (events)', async () => {
    const token = await signJson(result, sign, AGENT_SIGN_ALG, AGENT_ID);
    expect(token.split('.')).toHaveLength(3);
    expect(token).not.toContain('\n');
    expect(await verifyJson(token, verify, AGENT_SIGN_ALG)).toEqual(result);
    expect(signerOf(token)).toBe(AGENT_ID);
    expect(unverifiedPayload(token)).toEqual(result);
    await expect(verifyJson(token, verify, AGENT_SIGN_ALG, 'detached')).rejects.toThrow(/detached/);
    // As jose makes them (CompactSign, no helper of ours).
    const older = await new CompactSign(new TextEncoder().encode(JSON.stringify(result)))
      .setProtectedHeader({ alg: 'ES256', kid: AGENT_ID })
      .sign(sign as never);
    expect(await verifyJson(older, verify, AGENT_SIGN_ALG)).toEqual(result);
    const [h, p, s] = token.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...result, status: 'failed' })).toString('base64url')}.${s}`;
    await expect(verifyJson(tampered, verify, AGENT_SIGN_ALG)).rejects.toThrow(/signature verification failed/);
    expect(p.length).toBeGreaterThan(JSON.stringify(result).length); // what the detached form saves
  });

  it("the controller's EdDSA messages stay compact and verify", async () => {
    const controller = controllerKeyFromSecret(Buffer.alloc(32, 7));
    const token = await signJson({ v: PROTOCOL_VERSION, ok: true }, controller.privateKey, CONTROLLER_SIGN_ALG);
    expect(token.split('.')).toHaveLength(3);
    expect(signerOf(token)).toBeNull();
    expect(await verifyJson(token, controller.publicKey, CONTROLLER_SIGN_ALG)).toEqual({ v: PROTOCOL_VERSION, ok: true });
    const detached = await signJsonDetached({ v: PROTOCOL_VERSION, ok: true }, controller.privateKey, CONTROLLER_SIGN_ALG);
    expect(await verifyJson(detached, controller.publicKey, CONTROLLER_SIGN_ALG)).toEqual({ v: PROTOCOL_VERSION, ok: true });
  });

  it('are the JWS jose reads: node:crypto signs, jose verifies, and back', async () => {
    const keys = await generateAgentKeys();
    const mine = (await importAgentPrivateKey(keys.privateJwk)).sign;
    const joseKey = await importJWK(keys.publicJwk, AGENT_SIGN_ALG);
    const compact = await signJson(result, mine, AGENT_SIGN_ALG, AGENT_ID);
    expect(JSON.parse(new TextDecoder().decode((await compactVerify(compact, joseKey, { algorithms: [AGENT_SIGN_ALG] })).payload))).toEqual(result);
    const detached = await signJsonDetached(result, mine, AGENT_SIGN_ALG, AGENT_ID);
    const nl = detached.indexOf('\n');
    const [protectedHeader, , signature] = detached.slice(0, nl).split('.');
    await expect(
      flattenedVerify({ protected: protectedHeader, signature, payload: new TextEncoder().encode(detached.slice(nl + 1)) }, joseKey, {
        algorithms: [AGENT_SIGN_ALG],
      }),
    ).resolves.toBeDefined();
    const controller = controllerKeyFromSecret(Buffer.alloc(32, 9));
    const job = await signJson({ v: PROTOCOL_VERSION, job_id: 'x' }, controller.privateKey, CONTROLLER_SIGN_ALG);
    await expect(compactVerify(job, controller.publicKey, { algorithms: [CONTROLLER_SIGN_ALG] })).resolves.toBeDefined();
    const joseJob = await new CompactSign(new TextEncoder().encode('{"v":1}'))
      .setProtectedHeader({ alg: CONTROLLER_SIGN_ALG })
      .sign(controller.privateKey);
    expect(await verifyJson(joseJob, controller.publicKey, CONTROLLER_SIGN_ALG)).toEqual({ v: 1 });
    // A WebCrypto key (as jose imports one) still works with our helpers.
    expect(await verifyJson(compact, (await importJWK(keys.publicJwk, AGENT_SIGN_ALG)) as AnyKey, AGENT_SIGN_ALG)).toEqual(result);
    // A compact token claiming an extension we do not implement is refused, as jose refuses it.
    await expect(
      verifyJson(
        `${Buffer.from(JSON.stringify({ alg: 'ES256', crit: ['exp'] })).toString('base64url')}${compact.slice(compact.indexOf('.'))}`,
        verify,
        AGENT_SIGN_ALG,
      ),
    ).rejects.toThrow();
  });
});
